"""Between the parse and count stages: number lines, settle malformed lines, fix the budget.

The raw readers read a file in order and stop at ``max_samples`` well-formed samples; malformed
lines before the last kept sample raise (``on_malformed: error``) or are skipped and counted
(``skip``), later ones are never looked at. Parts are parsed in parallel and number their lines
from their piece's start, so the driver replays that decision here, part by part in file order.
Time-ordered traces keep every well-formed line and apply the budget after sorting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from heraldbench.pipelines.preprocess._parse import GOOD, KEY, LINE
from heraldbench.pipelines.preprocess._work import Piece, WorkDir, read_table, write_table
from heraldbench.platform.data.reading import REPORTED_LINES
from heraldbench.platform.exceptions import DataError, TraceFormatError

__all__ = ["Part", "Settlement", "settle", "write_ranks"]


@dataclass
class Part:
    """A parsed part, placed in the trace.

    Attributes:
        index: position in trace order (over all pieces).
        path: the parsed part file.
        file: the input file it came from.
        line_offset: add to the part's line numbers for the file's line numbers.
        info: the parse stage's :class:`PartInfo` fields.
        keep: which rows are samples (see :func:`keep_mask`); None: none of them.
    """

    index: int
    path: Path
    file: str
    line_offset: int
    info: dict[str, Any]
    keep: dict[str, Any] | None = None


@dataclass
class Settlement:
    """The outcome: parts with their keep rules and the reader's facts about malformed lines."""

    parts: list[Part]
    samples: int
    skipped: int = 0
    lines: list[int] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def place_parts(
    pieces: list[Piece], infos: list[list[dict[str, Any]]], work: WorkDir
) -> list[Part]:
    """Give every part its trace index and the offset of its piece's line numbers."""
    parts, last_line, last_file = [], 0, -1
    for piece, piece_infos in zip(pieces, infos, strict=True):
        if piece.file_index != last_file:
            last_line, last_file = 0, piece.file_index
        offset = 0 if piece.start == 0 else last_line
        for info in piece_infos:
            path = work.parsed_part(piece.index, info["part"])
            parts.append(Part(len(parts), path, piece.path, offset, info))
            last_line = max(last_line, offset + info["last_line"])
    return parts


def settle(
    parts: list[Part], *, max_samples: int | None, on_malformed: str, by_key: bool
) -> Settlement:
    """Decide each part's kept rows; raise or count the malformed lines as the readers do."""
    settled = Settlement(parts, 0)
    left = None if by_key else max_samples
    for part in parts:
        if left == 0:
            break
        good = part.info["good"]
        if left is None or good < left:
            part.keep = {"kind": "ranks", "limit": max_samples} if by_key else {"kind": "all"}
            bad_before = None
        else:  # the budget ends in this part, at its left-th well-formed row
            part.keep = {"kind": "prefix", "rows": left}
            bad_before = _line_of_good_row(part.path, left) if left else 0
        settled.samples += good if left is None else min(good, left)
        left = None if left is None else left - min(good, left)
        _count_bad(settled, part, bad_before, on_malformed)
    if by_key and max_samples is not None:
        settled.samples = min(settled.samples, max_samples)
    if not settled.samples:
        skipped = f" ({settled.skipped} malformed lines skipped)" if settled.skipped else ""
        raise DataError(
            f"{parts[0].file if parts else '?'}: no well-formed samples to read{skipped}"
        )
    return settled


def _line_of_good_row(path: Path, nth: int) -> int:
    """Part-relative line number of the part's ``nth`` (1-based) well-formed row."""
    table = read_table(path, columns=[LINE, GOOD])
    good = np.flatnonzero(table.column(GOOD).to_numpy(zero_copy_only=False))
    return int(table.column(LINE).to_numpy()[good[nth - 1]])


def _count_bad(settled: Settlement, part: Part, before: int | None, on_malformed: str) -> None:
    """Count the part's malformed lines (those before line ``before`` when given)."""
    if not part.info["bad"]:
        return
    first = [
        (line, reason) for line, reason in part.info["first_bad"] if before is None or line < before
    ]
    if not first:
        return
    if on_malformed == "error":
        line, reason = first[0]
        raise TraceFormatError(part.file, part.line_offset + line, reason)
    if before is None:
        settled.skipped += part.info["bad"]
    else:
        lines = read_table(_bad_path(part.path)).column(LINE).to_numpy()
        settled.skipped += int((lines < before).sum())
    for line, reason in first[: REPORTED_LINES - len(settled.lines)]:
        settled.lines.append(part.line_offset + line)
        settled.reasons.append(reason)


def _bad_path(parsed: Path) -> Path:
    return parsed.with_name(parsed.name.replace(".arrow", ".bad.arrow"))


def write_ranks(parts: list[Part], work: WorkDir) -> None:
    """Rank every well-formed row by its sort key (stable: ties keep file order).

    Holds 16 bytes per sample in the driver (key and rank), which time-ordered rating files
    afford; it is the only stage whose memory grows with the dataset.
    """
    keys = []
    for part in parts:
        table = read_table(part.path, columns=[KEY, GOOD])
        good = table.column(GOOD).to_numpy(zero_copy_only=False).astype(bool)
        keys.append(table.column(KEY).to_numpy()[good])
    order = np.argsort(np.concatenate(keys), kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(len(order))
    start = 0
    for part, part_keys in zip(parts, keys, strict=True):
        stop = start + len(part_keys)
        write_table(work.ranks(part.index), pa.table({"rank": ranks[start:stop]}))
        start = stop
