"""Vocabulary stages: count values per part, merge counts per table, assign local rows.

No stage holds the file: a count task reads one part, a merge task a few count files of one
table, and the last one a table's merged counts. The memory bound is therefore one part plus one
table's vocabulary (its distinct values), not the dataset; this is the modelling assumption that
lets a dataset larger than memory be prepared (Criteo Kaggle's largest table has ~10 M values).

Row order matches the raw readers exactly: values are ordered by first appearance over every
parsed line (well-formed or not, as the readers' block dictionaries are), counted over the kept
samples only, and values never kept get no row. A first appearance is encoded as
``part << 32 | position in the part's dictionary`` (a part's dictionary lists values in order of
first appearance), so the smallest code over all parts is the first appearance in the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from heraldbench.pipelines.preprocess._parse import GOOD, raw_column
from heraldbench.pipelines.preprocess._work import (
    WorkDir,
    read_json,
    read_table,
    write_json,
    write_table,
)
from heraldbench.platform.data.reading import MISSING_ROW, RARE_ROW

__all__ = ["count_part", "finish_vocab", "keep_mask", "merge_counts"]

_PART_SHIFT = 32


def keep_mask(part: pa.Table, keep: dict[str, Any], ranks_path: Path | None) -> np.ndarray:
    """Rows of a part that are kept samples.

    ``keep`` is ``{"kind": "all"}`` (every well-formed row), ``{"kind": "prefix", "rows": k}``
    (the first k well-formed rows: the sample budget ends in this part) or
    ``{"kind": "ranks", "limit": n}`` (well-formed rows whose time rank, stored at
    ``ranks_path``, is below n; n None keeps all).
    """
    good = part.column(GOOD).to_numpy(zero_copy_only=False).astype(bool)
    if keep["kind"] == "all":
        return good
    if keep["kind"] == "prefix":
        return good & (np.cumsum(good) <= keep["rows"])
    if keep["limit"] is None:
        return good
    assert ranks_path is not None
    ranks = read_table(ranks_path).column("rank").to_numpy()
    mask = np.zeros_like(good)
    mask[np.flatnonzero(good)] = ranks < keep["limit"]
    return mask


def count_part(
    part_index: int,
    parsed: Path,
    keep: dict[str, Any],
    tables: tuple[str, ...],
    work: WorkDir,
) -> dict[str, Any]:
    """Count each table's values over the part's kept rows (skipped when already done)."""
    marker = work.count_marker(part_index)
    done = read_json(marker)
    if done is not None:
        return done
    part = read_table(parsed, columns=[GOOD, *(raw_column(t) for t in tables)])
    kept = keep_mask(part, keep, work.ranks(part_index))
    missing = {}
    for table in tables:
        counts, missing[table] = _count_column(part.column(raw_column(table)), kept, part_index)
        write_table(work.counts(table, part_index), counts)
    result = {"kept": int(kept.sum()), "missing": missing}
    write_json(marker, result)
    return result


def _count_column(
    column: pa.ChunkedArray, kept: np.ndarray, part_index: int
) -> tuple[pa.Table, int]:
    encoded = pc.dictionary_encode(column.combine_chunks())
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
    dictionary = encoded.dictionary
    counted = kept & (codes >= 0)
    counts = np.bincount(codes[counted], minlength=len(dictionary)).astype(np.int64)
    first = (np.int64(part_index) << _PART_SHIFT) + np.arange(len(dictionary), dtype=np.int64)
    table = pa.table({"value": dictionary, "count": counts, "first": first})
    return table, int((kept & (codes < 0)).sum())


def merge_counts(inputs: list[Path], output: Path) -> Path:
    """Merge count files of one table: counts add up, the first appearance is the earliest."""
    if output.is_file():
        return output
    tables = [read_table(path) for path in inputs]
    merged = (
        pa.concat_tables(tables)
        .group_by("value")
        .aggregate([("count", "sum"), ("first", "min")])
        .rename_columns(["value", "count", "first"])
    )
    write_table(output, merged)
    return output


def finish_vocab(
    table: str, merged: Path, missing: int, frequency_threshold: int, work: WorkDir
) -> dict[str, Any]:
    """Assign local rows to a table's values and write its vocabulary and row popularity.

    Row 0 is the missing value and row 1 the shared rare row when the threshold is above 1, as in
    :class:`heraldbench.platform.data._vocab.TableVocab`.
    """
    marker = work.vocab_marker(table)
    done = read_json(marker)
    if done is not None:
        return done
    counts = read_table(merged)
    counts = counts.filter(pc.greater(counts.column("count"), 0))
    counts = counts.take(pc.sort_indices(counts, [("first", "ascending")]))
    count = counts.column("count").to_numpy()
    frequent = count >= max(frequency_threshold, 1)
    first_value_row = RARE_ROW + 1 if frequency_threshold > 1 else RARE_ROW
    rows = np.where(frequent, first_value_row + np.cumsum(frequent) - 1, RARE_ROW).astype(np.int32)
    size = first_value_row + int(frequent.sum())
    vocab = pa.table({"value": counts.column("value"), "count": count, "row": rows})
    write_table(work.vocab(table), vocab)
    # float64 weights are exact for counts below 2**53
    popularity = np.bincount(rows, weights=count, minlength=size).astype(np.int64)
    popularity[MISSING_ROW] += missing
    write_table(work.popularity_part(table), pa.table({"accesses": popularity}))
    result = {"rows": size, "rare_values": int((~frequent).sum()), "values": len(count)}
    write_json(marker, result)
    return result
