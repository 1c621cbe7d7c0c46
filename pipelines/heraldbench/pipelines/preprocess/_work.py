"""The preprocessing work folder: input pieces, the fingerprint that decides what is reusable,
and atomic writes so that an interrupted run leaves only whole files behind.

Every stage writes its outputs under a temporary name and renames them into place, then (for
multi-file steps) a small JSON marker; a re-run reuses every output whose marker exists, so work
already done is skipped. The fingerprint covers the input files (path, size, modification time),
the source spec and the piece size: when any of them changes, earlier work is discarded.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import feather

from heraldbench.platform.data.prepared import FORMAT_VERSION
from heraldbench.platform.exceptions import DataError

__all__ = [
    "Piece",
    "WorkDir",
    "fingerprint",
    "num_rows",
    "plan_pieces",
    "read_json",
    "read_table",
    "releasing",
    "write_json",
    "write_table",
]

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Piece:
    """A unit of the parse stage: a byte range of an uncompressed file, or a whole gzip file.

    Attributes:
        index: position of the piece in trace order.
        file_index: which input file.
        path: the input file.
        start: first byte (a line start; 0 includes the header).
        stop: one past the last byte (a line start or the file size); None for a gzip file,
            which cannot be entered in the middle and is parsed as one piece, part by part.
    """

    index: int
    file_index: int
    path: str
    start: int
    stop: int | None


@dataclass(frozen=True)
class WorkDir:
    """Paths of one prepared dataset under construction."""

    out: Path

    @property
    def work(self) -> Path:
        return self.out / "_work"

    def piece_marker(self, piece: int) -> Path:
        return self.work / "parsed" / f"piece-{piece:05d}.json"

    def parsed_part(self, piece: int, part: int) -> Path:
        return self.work / "parsed" / f"piece-{piece:05d}-part-{part:05d}.arrow"

    def bad_lines(self, piece: int, part: int) -> Path:
        return self.work / "parsed" / f"piece-{piece:05d}-part-{part:05d}.bad.arrow"

    def ranks(self, part: int) -> Path:
        return self.work / "ranks" / f"part-{part:05d}.arrow"

    def count_marker(self, part: int) -> Path:
        return self.work / "counts" / f"part-{part:05d}.json"

    def counts(self, table: str, part: int) -> Path:
        return self.work / "counts" / table / f"part-{part:05d}.arrow"

    def merged(self, table: str, level: int, index: int) -> Path:
        return self.work / "merged" / table / f"level-{level}-{index:05d}.arrow"

    def vocab(self, table: str) -> Path:
        return self.out / "vocab" / f"{table}.parquet"

    def vocab_marker(self, table: str) -> Path:
        return self.work / "vocab" / f"{table}.json"

    def popularity_part(self, table: str) -> Path:
        return self.work / "vocab" / f"{table}.popularity.arrow"

    def ids(self, table: str, part: int) -> Path:
        return self.work / "ids" / table / f"part-{part:05d}.arrow"

    def mapped(self, part: int) -> Path:
        return self.work / "mapped" / f"part-{part:05d}.arrow"

    def shard(self, index: int) -> Path:
        return self.out / "shards" / f"part-{index:05d}.parquet"

    def plan_file(self) -> Path:
        return self.work / "plan.json"

    def reset(self, keep: str) -> None:
        """Delete outputs of an earlier run whose fingerprint is not ``keep``."""
        plan = read_json(self.plan_file())
        if plan is not None and plan.get("fingerprint") == keep:
            return
        for name in ("_work", "shards", "vocab"):
            shutil.rmtree(self.out / name, ignore_errors=True)
        for name in ("manifest.json", "popularity.npy"):
            (self.out / name).unlink(missing_ok=True)
        write_json(self.plan_file(), {"fingerprint": keep})


def fingerprint(source: dict[str, Any], inputs: list[Path], part_bytes: int) -> str:
    """A digest of everything the prepared dataset depends on."""
    files = []
    for path in inputs:
        stat = path.stat()
        files.append([str(path.resolve()), stat.st_size, stat.st_mtime_ns])
    document = {"version": FORMAT_VERSION, "source": source, "files": files, "part": part_bytes}
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def is_gzip(path: Path) -> bool:
    with path.open("rb") as stream:
        return stream.read(2) == _GZIP_MAGIC


def plan_pieces(inputs: list[Path], header_lines: list[int], part_bytes: int) -> list[Piece]:
    """Cut each input into pieces of about ``part_bytes`` at line boundaries.

    A piece after the first of a file starts past the header, so header lines are skipped once.
    """
    pieces: list[Piece] = []
    for file_index, (path, header) in enumerate(zip(inputs, header_lines, strict=True)):
        if not path.is_file():
            raise DataError(f"dataset file {str(path)!r} does not exist or is not a file")
        if is_gzip(path):
            pieces.append(Piece(len(pieces), file_index, str(path), 0, None))
            continue
        bounds = _line_bounds(path, header, part_bytes)
        for start, stop in itertools.pairwise(bounds):
            pieces.append(Piece(len(pieces), file_index, str(path), start, stop))
    return pieces


def _line_bounds(path: Path, header_lines: int, part_bytes: int) -> list[int]:
    size = path.stat().st_size
    bounds = [0]
    with path.open("rb") as stream:
        for _ in range(header_lines):
            stream.readline()
        body = stream.tell()
        target = body + part_bytes
        while target < size:
            stream.seek(target - 1)
            stream.readline()  # a target at a line start stays there
            position = stream.tell()
            if position >= size:
                break
            if position > bounds[-1]:
                bounds.append(position)
            target = max(position, target) + part_bytes
    bounds.append(size)
    return bounds if size > 0 else [0, 0]


def releasing(function: Callable[..., Any], *args: Any) -> Any:
    """Call ``function`` as a task, then hand its memory back to the operating system.

    Arrow's allocator keeps freed memory for reuse; a Dask worker measures its memory by RSS and
    pauses at 80% of its limit, so memory kept after a task could pause a small worker for good.
    """
    try:
        return function(*args)
    finally:
        pa.default_memory_pool().release_unused()


# --- atomic files ------------------------------------------------------------------------------


def _temporary(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_json(path: Path, document: Any) -> None:
    """Write JSON so that readers see the old file or the whole new one, never a part."""
    tmp = _temporary(path)
    tmp.write_text(json.dumps(document, indent=1))
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    """The JSON document at ``path``, or None when there is none."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


def write_table(path: Path, table: pa.Table) -> None:
    """Write a table atomically: Parquet for ``.parquet`` outputs, else an Arrow IPC file.

    Intermediate files are Arrow IPC (LZ4): several times cheaper to write and read than
    Parquet, which matters for the many small files of the count and map stages.
    """
    tmp = _temporary(path)
    if path.suffix == ".parquet":
        pq.write_table(table, tmp)
    else:
        feather.write_feather(table, tmp, compression="lz4")
    os.replace(tmp, path)


def read_table(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A table written by :func:`write_table` (optionally some columns only)."""
    if path.suffix == ".parquet":
        return pq.read_table(path, columns=columns)
    return feather.read_table(path, columns=columns, memory_map=False)


def num_rows(path: Path) -> int:
    """Rows of a table written by :func:`write_table`, without reading its data."""
    if path.suffix == ".parquet":
        return pq.read_metadata(path).num_rows
    with pa.ipc.open_file(path) as reader:
        return sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
