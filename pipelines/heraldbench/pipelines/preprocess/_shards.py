"""Shard stages: map raw values to local rows table by table, assemble shards, re-cut by time.

A *map* task takes one table and a group of parts: it loads that table's vocabulary (the values
that own a row) once and looks up the table's column of each part in turn, writing one int32
column per part. Its memory is one vocabulary plus one column, whatever the dataset's size, and
the vocabulary's hash set is built once per group rather than once per part. An *assemble* task
then joins a part's label, dense features and id columns into a shard.

Time-ordered traces (MovieLens ``sort_by_time``) are assembled in file order with each row's time
rank, then re-cut: output shard j gathers ranks [j·S, (j+1)·S) from every assembled part. That
reads each part's rank column once per output shard, which suits rating files (tens of millions
of rows), not terabytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from heraldbench.pipelines.preprocess._counts import keep_mask
from heraldbench.pipelines.preprocess._parse import GOOD, raw_column
from heraldbench.pipelines.preprocess._work import WorkDir, num_rows, read_table, write_table
from heraldbench.platform.data.prepared import LABEL_COLUMN, dense_column, table_column
from heraldbench.platform.data.reading import MISSING_ROW, RARE_ROW
from heraldbench.platform.exceptions import DataError

__all__ = ["RANK", "assemble_part", "map_table", "recut_by_rank"]

RANK = "_rank"

#: (part index, parsed part file, keep rule) of each part a map task covers.
PartRef = tuple[int, Path, dict[str, Any]]


def map_table(table: str, parts: list[PartRef], frequency_threshold: int, work: WorkDir) -> int:
    """Write the local ids of ``table`` for each part (parts already written are skipped)."""
    todo = [p for p in parts if not work.ids(table, p[0]).is_file()]
    if not todo:
        return 0
    values, rows_of = _vocabulary(work.vocab(table), frequency_threshold)
    for part_index, parsed, keep in todo:
        part = read_table(parsed, columns=[GOOD, raw_column(table)])
        kept = keep_mask(part, keep, work.ranks(part_index))
        column = part.column(raw_column(table)).filter(pa.array(kept))
        rows = _lookup(column, values, rows_of, frequency_threshold, table)
        write_table(work.ids(table, part_index), pa.table({"id": pa.array(rows, pa.int32())}))
    return len(todo)


def _vocabulary(path: Path, frequency_threshold: int) -> tuple[pa.Array, np.ndarray]:
    vocab = read_table(path, columns=["value", "row"])
    if frequency_threshold > 1:  # rare values are not looked up: not found means rare
        vocab = vocab.filter(pc.not_equal(vocab.column("row"), RARE_ROW))
    return vocab.column("value").combine_chunks(), vocab.column("row").to_numpy()


def _lookup(
    values: pa.ChunkedArray, vocab: pa.Array, rows_of: np.ndarray, threshold: int, table: str
) -> np.ndarray:
    """Local row of each value: its vocabulary row, 0 when missing, 1 when rare."""
    where = pc.fill_null(pc.index_in(values, value_set=vocab), -1).to_numpy(zero_copy_only=False)
    missing = values.is_null().to_numpy(zero_copy_only=False)
    unknown = (where < 0) & ~missing
    if unknown.any() and threshold <= 1:
        raise DataError(f"table {table}: a kept value has no row (stale vocabulary?)")
    rows = rows_of[np.maximum(where, 0)] if len(rows_of) else np.zeros(len(where), np.int32)
    rows = np.where(unknown, RARE_ROW, rows)
    return np.where(missing, MISSING_ROW, rows).astype(np.int32)


def assemble_part(
    part_index: int,
    parsed: Path,
    keep: dict[str, Any],
    tables: tuple[str, ...],
    dense_names: tuple[str, ...],
    output: Path,
    work: WorkDir,
) -> int:
    """Write the part's kept rows as a shard; returns the row count (skipped if written)."""
    if output.is_file():
        return num_rows(output)
    names = ["label", GOOD, *(dense_column(n) for n in dense_names)]
    part = read_table(parsed, columns=names)
    kept = keep_mask(part, keep, work.ranks(part_index))
    part = part.filter(pa.array(kept))
    columns: dict[str, Any] = {LABEL_COLUMN: part.column("label")}
    for name in dense_names:
        columns[dense_column(name)] = part.column(dense_column(name))
    for table in tables:
        columns[table_column(table)] = read_table(work.ids(table, part_index)).column("id")
    if keep["kind"] == "ranks":
        ranks = read_table(work.ranks(part_index)).column("rank").to_numpy()
        good = np.flatnonzero(_good_of(parsed))
        columns[RANK] = pa.array(ranks[kept[good]], pa.int64())
    write_table(output, pa.table(columns))
    return part.num_rows


def _good_of(parsed: Path) -> np.ndarray:
    return read_table(parsed, columns=[GOOD]).column(GOOD).to_numpy(zero_copy_only=False)


def recut_by_rank(mapped: list[Path], low: int, high: int, output: Path) -> int:
    """Write the rows whose time rank is in [low, high), in rank order; returns the row count."""
    if output.is_file():
        return num_rows(output)
    pieces = []
    for path in mapped:
        ranks = read_table(path, columns=[RANK]).column(RANK).to_numpy()
        inside = np.flatnonzero((ranks >= low) & (ranks < high))
        if len(inside):
            pieces.append(read_table(path).take(pa.array(inside)))
    table = pa.concat_tables(pieces)
    table = table.take(pc.sort_indices(table, [(RANK, "ascending")])).drop_columns([RANK])
    write_table(output, table)
    return table.num_rows
