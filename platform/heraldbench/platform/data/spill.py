"""A trace written to local disk as it is first read, and read back from there afterwards, with
random access: for consumers that pass over a trace several times (FAE's offline phase and its
replay) when the source is costly to read again (a profile's generator, a parsed log file).

What is written is what is read: a reader of ids only (a simulation) of a source that produces
ids apart (a profile's generator) spills the ids alone, made on several cores where the source
can (:meth:`TraceSource.id_blocks_on`: the reader of the spilling pass, FAE's sampled counts,
leaves them free). Whole samples are then computed from the spilled ids where the source
computes labels and features from them (:meth:`TraceSource.whole_samples`); else the first
read of whole samples spills them all, once (one more pass over the source).

Disk: ``4·F`` bytes per sample for the ids alone (4.8 GB for Criteo Kaggle's 45.8 M samples),
``4·(F + D + 1)`` for whole samples (7.3 GB), and ``4·T`` more for a ragged trace's lengths,
in anonymous files of the system's temporary directory (``TMPDIR``) that vanish with the
process, however it ends. Memory: one block (and
the source's own, e.g. a ring per generating thread). Where the disk lacks room the trace is
read from its source each time, as without this wrapper (``describe()["spilled"]`` says what is
on disk); so does a trace whose writing fails part-way (the disk filled meanwhile: ranks of one
host may spill at once).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from heraldbench.platform._cores import usable_cores
from heraldbench.platform.data._trace import ROW_ID_DTYPE, SampleChunk, TraceSource
from heraldbench.platform.exceptions import DataError

__all__ = ["SpilledTrace"]

#: Samples read back at a time, and the widest span of samples one read covers.
_SPAN = 1 << 16
#: Room left free on the disk beyond the files themselves.
_HEADROOM_BYTES = 1 << 30


class SpilledTrace(TraceSource):
    """``source``, spilled to disk on its first full read (see the module docstring).

    Args:
        source: the trace; its samples, ids and order are unchanged.
        directory: where the files go (default: the system's temporary directory).
    """

    def __init__(self, source: TraceSource, directory: str | None = None) -> None:
        self.source = source
        self.layout, self.num_samples, self.num_dense = (
            source.layout, source.num_samples, source.num_dense
        )  # fmt: skip
        self.directory = directory if directory is not None else tempfile.gettempdir()
        self.random_access = source.random_access  # True once the files hold every sample's ids
        self._ids: Any = None  # file of every sample's ids
        self._rest: tuple[Any, Any] | None = None  # files of every sample's labels, dense features
        self._rest_tried = False  # a pass to spill whole samples after the ids ran once
        # a ragged trace's lengths are spilled after each sample's ids, in the ids' file
        self._id_columns = self.layout.ids_per_sample + (
            self.layout.num_tables if self.layout.is_ragged else 0)
        self._widths = (self._id_columns * 4, 4, self.num_dense * 4)  # bytes per sample

    @property
    def bytes_needed(self) -> int:
        return self.num_samples * sum(self._widths)

    def describe(self) -> dict[str, Any]:
        on_disk = "samples" if self._rest is not None else "ids" if self._ids is not None else False
        return {**self.source.describe(), "spilled": on_disk}

    def renumbered(self, rows: np.ndarray) -> np.ndarray:
        return self.source.renumbered(rows)

    def _blocks(self) -> Iterator[SampleChunk]:
        if self._rest is not None:
            yield from self._read_through(ids_only=False)
        elif self._completes_ids():
            start = 0
            for chunk in self._read_through(ids_only=True):
                positions = np.arange(start, start + len(chunk))
                yield self.source.whole_samples(positions, chunk.ids)
                start += len(chunk)
        elif self.source.random_access or not self._has_room(ids_only=False):
            yield from self.source.chunks(_SPAN)
        else:
            yield from self._write_through(ids_only=False)

    def _id_blocks(self) -> Iterator[SampleChunk]:
        if self._ids is not None:
            yield from self._read_through(ids_only=True)
            return
        # A source that reads whole samples either way (a file) is spilled whole at once.
        ids_only = type(self.source)._id_blocks is not TraceSource._id_blocks
        if self.source.random_access or not self._has_room(ids_only):
            yield from self.source.chunks(_SPAN, ids_only=True)
        else:
            yield from self._write_through(ids_only)

    def _read_through(self, ids_only: bool) -> Iterator[SampleChunk]:
        for start in range(0, self.num_samples, _SPAN):
            yield self._read(start, min(start + _SPAN, self.num_samples), ids_only)

    def _write_through(self, ids_only: bool) -> Iterator[SampleChunk]:
        """The source's chunks (ids only, or whole), written to new files as they pass; the
        files are kept once they hold every sample. A write that fails (the disk filled
        meanwhile) drops them, and the read goes on from the source alone."""
        files: tuple[Any, ...] | None = tuple(  # kept open past this pass: closed by _close
            tempfile.TemporaryFile(dir=self.directory)  # noqa: SIM115
            for _ in range(1 if ids_only else 3)
        )
        written = 0
        try:
            for chunk in self._source_chunks(ids_only):
                if files is not None and not _appended(files, chunk):
                    _close(files)
                    files = None
                written += len(chunk)
                yield chunk
        finally:
            if files is not None and written == self.num_samples:
                self._keep(files)
            elif files is not None:  # abandoned part-way: the next read starts again
                _close(files)

    def _source_chunks(self, ids_only: bool) -> Iterator[SampleChunk]:
        """The source's chunks for a spilling pass: ids on every core where it can."""
        on_cores = self.source.id_blocks_on(usable_cores()) if ids_only else None
        return self.source.chunks(_SPAN, ids_only) if on_cores is None else on_cores

    def _keep(self, files: tuple[Any, ...]) -> None:
        for file in files:
            file.flush()
        # An ids file this replaces stays open for reads under way; its finalizer closes it.
        self._ids, self.random_access = files[0], True
        if len(files) == 3:
            self._rest = (files[1], files[2])
        weakref.finalize(self, _close, files)

    def _has_room(self, ids_only: bool) -> bool:
        needed = self.num_samples * (self._widths[0] if ids_only else sum(self._widths))
        return shutil.disk_usage(self.directory).free >= needed + _HEADROOM_BYTES

    def samples_at(self, positions: np.ndarray) -> SampleChunk:
        if self._completes_ids():
            positions = self._checked_positions(positions)
            return self.source.whole_samples(positions, self._gathered(positions, True).ids)
        if self._ids is not None and self._rest is None and not self._rest_tried:
            self._spill_whole_samples()
        if self._rest is None:
            return self.source.samples_at(positions)
        return self._gathered(positions, ids_only=False)

    def _completes_ids(self) -> bool:
        """Only the ids are on disk, and the source computes the rest from them."""
        return self._ids is not None and self._rest is None and self.source.samples_from_ids

    def _spill_whole_samples(self) -> None:
        """Only the ids are on disk and whole samples are asked for: one whole pass over the
        source spills them all, tried once (where there is room; else the source serves)."""
        self._rest_tried = True
        if not self.source.random_access and self._has_room(ids_only=False):
            for _ in self._write_through(ids_only=False):
                pass

    def ids_at(self, positions: np.ndarray) -> np.ndarray:
        if self._ids is None:
            return self.source.ids_at(positions)
        return self._gathered(positions, ids_only=True).ids

    def id_samples_at(self, positions: np.ndarray) -> SampleChunk:
        if self._ids is None:
            return self.source.id_samples_at(positions)
        return self._gathered(positions, ids_only=True)

    def _gathered(self, positions: np.ndarray, ids_only: bool) -> SampleChunk:
        """The samples at ``positions`` (any order, repeats allowed), read span by span; a run of
        consecutive samples in order (FAE's hot/cold split asks for blocks so) is read as it lies,
        with no sort and no second buffer."""
        positions = self._checked_positions(positions)
        if _one_run(positions):
            return self._read(int(positions[0]), int(positions[-1]) + 1, ids_only)
        out = self._empty(positions.size, ids_only)
        order = np.argsort(positions, kind="stable")
        wanted = positions[order]
        cuts = np.flatnonzero(np.diff(wanted // _SPAN)) + 1
        for group in np.split(np.arange(wanted.size), cuts):
            if not group.size:
                continue
            lo, hi = int(wanted[group[0]]), int(wanted[group[-1]]) + 1
            span = self._read(lo, hi, ids_only)
            picked, where = wanted[group] - lo, order[group]
            out.ids[where] = span.ids[picked]
            if out.lengths is not None:
                out.lengths[where] = span.lengths[picked]
            if not ids_only:
                out.labels[where], out.dense[where] = span.labels[picked], span.dense[picked]
        return out

    def _read(self, start: int, stop: int, ids_only: bool = False) -> SampleChunk:
        """Samples ``start..stop`` from the files (``os.preadv``: threads may read at once)."""
        out = self._empty(stop - start, ids_only)
        packed = out.ids if out.lengths is None else np.empty(
            (stop - start, self._id_columns), ROW_ID_DTYPE)
        files = (self._ids,) if ids_only else (self._ids, *self._rest)  # type: ignore[misc]
        arrays = (packed,) if ids_only else (packed, out.labels, out.dense)
        for file, width, array in zip(files, self._widths, arrays):
            if array.nbytes:
                got = os.preadv(file.fileno(), [memoryview(array).cast("B")], start * width)
                if got != array.nbytes:
                    raise DataError(f"the spilled trace's file ended {array.nbytes - got} bytes "
                                    f"short of samples {start}..{stop - 1}")
        if out.lengths is not None:
            columns = self.layout.ids_per_sample
            out.ids[:], out.lengths[:] = packed[:, :columns], packed[:, columns:]
        return out

    def _empty(self, n: int, ids_only: bool) -> SampleChunk:
        ids = np.empty((n, self.layout.ids_per_sample), ROW_ID_DTYPE)
        lengths = (np.empty((n, self.layout.num_tables), np.int32) if self.layout.is_ragged
                   else None)
        if ids_only:
            return SampleChunk.ids_alone(ids, self.num_dense, lengths)
        return SampleChunk(ids, np.empty(n, np.float32), np.empty((n, self.num_dense), np.float32),
                           lengths)


def _one_run(positions: np.ndarray) -> bool:
    """Whether ``positions`` are consecutive samples in ascending order."""
    return (
        positions.size > 1
        and int(positions[-1] - positions[0]) == positions.size - 1
        and bool((np.diff(positions) == 1).all())
    )


def _close(files) -> None:
    for file in files:
        file.close()


def _appended(files: tuple[Any, ...], chunk: SampleChunk) -> bool:
    """Append ``chunk``'s ids, then its labels and dense features (as many as ``files``) to
    ``files``; False if the disk refused (full, or gone)."""
    ids = chunk.ids.astype(ROW_ID_DTYPE, copy=False)
    if chunk.lengths is not None:
        ids = np.concatenate([ids, chunk.lengths.astype(ROW_ID_DTYPE, copy=False)], axis=1)
    arrays = (ids,
              chunk.labels.astype(np.float32, copy=False),
              chunk.dense.astype(np.float32, copy=False))  # fmt: skip
    try:
        for file, array in zip(files, arrays):
            file.write(np.ascontiguousarray(array).data)
    except OSError:
        return False
    return True
