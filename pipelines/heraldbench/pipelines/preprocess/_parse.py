"""Parse stage: one Dask task per piece turns raw lines into typed columnar parts.

Each block of a piece is parsed with the format's own :class:`ReadingPlan` (the same code the
in-memory readers run) and written as one *part*: the label, the dense features, each table's
raw value as a string (null for a missing value), the line number, whether the line is
well-formed, and the sort key when the trace is ordered by time. Bad lines are kept as line
numbers (with the first few reasons) for the driver, which alone knows which of them fall inside
the sample budget and how lines are numbered across pieces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from heraldbench.pipelines.preprocess._work import (
    Piece,
    WorkDir,
    read_json,
    write_json,
    write_table,
)
from heraldbench.platform.data.prepared import dense_column
from heraldbench.platform.data.reading import (
    REPORTED_LINES,
    Block,
    ParsedRows,
    Problem,
    ReadingPlan,
)

__all__ = ["GOOD", "KEY", "LINE", "PartInfo", "parse_piece", "raw_column"]

LINE = "_line"
GOOD = "_good"
KEY = "_key"


def raw_column(table: str) -> str:
    """Part column holding a table's raw values."""
    return f"raw:{table}"


@dataclass
class PartInfo:
    """What the driver learns about one parsed part.

    Line numbers are the piece's own: absolute for a piece that starts its file, counted from the
    piece's first line (as 1) otherwise.

    Attributes:
        piece: the piece it came from.
        part: its position within the piece.
        rows: parsed (field-count-correct) rows.
        good: well-formed rows among them.
        bad: malformed lines.
        first_bad: the first :data:`REPORTED_LINES` malformed lines, with their reasons.
        last_line: the last line number the part covered.
    """

    piece: int
    part: int
    rows: int
    good: int
    bad: int
    first_bad: list[tuple[int, str]] = field(default_factory=list)
    last_line: int = 0


def parse_piece(
    piece: Piece, plan: ReadingPlan, work: WorkDir, part_bytes: int
) -> list[dict[str, Any]]:
    """Parse one piece into parts (skipped when its marker exists); returns the parts' infos."""
    marker = work.piece_marker(piece.index)
    done = read_json(marker)
    if done is not None:
        return done
    infos = []
    path = Path(piece.path)
    blocks = plan.blocks(path, start=piece.start, stop=piece.stop, block_bytes=part_bytes)
    for part, block in enumerate(blocks):
        parsed = plan.parse(block)
        infos.append(_write_part(piece, part, plan, block, parsed, work).__dict__)
    write_json(marker, infos)
    return infos


def _write_part(
    piece: Piece, part: int, plan: ReadingPlan, block: Block, parsed: ParsedRows, work: WorkDir
) -> PartInfo:
    bad_lines = _bad_lines(block.problems)
    good = ~np.isin(block.lines, bad_lines)
    columns: dict[str, pa.Array] = {"label": pa.array(parsed.labels, pa.float32())}
    for d, name in enumerate(plan.dense_names):
        columns[dense_column(name)] = pa.array(parsed.dense[:, d], pa.float32())
    for name, codes, keys in zip(plan.table_names, parsed.codes, parsed.keys, strict=True):
        columns[raw_column(name)] = _values(codes, keys)
    columns[LINE] = pa.array(block.lines, pa.int64())
    columns[GOOD] = pa.array(good)
    if plan.sort_by_key and parsed.sort_key is not None:
        columns[KEY] = pa.array(parsed.sort_key, pa.int64())
    write_table(work.parsed_part(piece.index, part), pa.table(columns))
    write_table(work.bad_lines(piece.index, part), pa.table({LINE: bad_lines}))
    last = max(
        int(block.lines.max()) if len(block.lines) else 0,
        int(bad_lines.max()) if len(bad_lines) else 0,
    )
    first_bad = [
        (int(line), _reason(block.problems, int(line))) for line in bad_lines[:REPORTED_LINES]
    ]
    return PartInfo(
        piece.index, part, len(block.lines), int(good.sum()), len(bad_lines), first_bad, last
    )


def _values(codes: np.ndarray, keys: pa.Array) -> pa.Array:
    """Each row's raw value; a missing value (code -1) is null."""
    missing = codes < 0
    indices = pa.array(np.where(missing, 0, codes), pa.int32(), mask=missing)
    return pc.take(keys, indices) if len(keys) else pa.nulls(len(codes), pa.string())


def _bad_lines(problems: list[Problem]) -> np.ndarray:
    if not problems:
        return np.zeros(0, np.int64)
    return np.unique(np.concatenate([np.asarray(p.lines, np.int64) for p in problems]))


def _reason(problems: list[Problem], line: int) -> str:
    for problem in problems:
        hits = np.flatnonzero(problem.lines == line)
        if len(hits):
            return problem.reason_at(int(hits[0]))
    return "malformed line"  # pragma: no cover - every bad line comes from a problem
