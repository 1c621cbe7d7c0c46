"""A trace written to local disk as it is first read, and read back from there afterwards, with
random access: for consumers that pass over a trace several times (FAE's offline phase and its
replay) when the source is costly to read again (a profile's generator, a parsed log file).

Disk: ``4·(F + D + 1)`` bytes per sample (7.3 GB for Criteo Kaggle's 45.8 M samples), in
anonymous files of the system's temporary directory (``TMPDIR``) that vanish with the process,
however it ends. Memory: one block. Where the disk lacks room the trace is read from its source
each time, as without this wrapper (``describe()["spilled"]`` says which); so does a trace whose
writing fails part-way (the disk filled meanwhile: ranks of one host may spill at once).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

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
        self.random_access = source.random_access  # True once the files hold every sample
        self._files: tuple[Any, Any, Any] | None = None  # ids, labels, dense
        self._widths = (self.layout.num_tables * 4, 4, self.num_dense * 4)  # bytes per sample

    @property
    def bytes_needed(self) -> int:
        return self.num_samples * sum(self._widths)

    def describe(self) -> dict[str, Any]:
        return {**self.source.describe(), "spilled": self._files is not None}

    def renumbered(self, rows: np.ndarray) -> np.ndarray:
        return self.source.renumbered(rows)

    def _blocks(self) -> Iterator[SampleChunk]:
        if self._files is not None:
            for start in range(0, self.num_samples, _SPAN):
                yield self._read(start, min(start + _SPAN, self.num_samples))
            return
        if self.source.random_access or not self._has_room():
            yield from self.source.chunks(_SPAN)
            return
        yield from self._write_through()

    def _write_through(self) -> Iterator[SampleChunk]:
        """The source's chunks, written to new files as they pass; the files are kept once they
        hold every sample. A write that fails (the disk filled meanwhile) drops them, and the
        read goes on from the source alone."""
        files: tuple[Any, ...] | None = tuple(  # kept open past this pass: closed by _close
            tempfile.TemporaryFile(dir=self.directory) for _ in range(3)  # noqa: SIM115
        )
        written = 0
        try:
            for chunk in self.source.chunks(_SPAN):
                if files is not None and not _appended(files, chunk):
                    _close(files)
                    files = None
                written += len(chunk)
                yield chunk
        finally:
            if files is not None and written == self.num_samples:
                for file in files:
                    file.flush()
                self._files, self.random_access = files, True
                weakref.finalize(self, _close, files)
            elif files is not None:  # abandoned part-way: the next read starts again
                _close(files)

    def _has_room(self) -> bool:
        return shutil.disk_usage(self.directory).free >= self.bytes_needed + _HEADROOM_BYTES

    def samples_at(self, positions: np.ndarray) -> SampleChunk:
        if self._files is None:
            return self.source.samples_at(positions)
        return self._gathered(positions, ids_only=False)

    def ids_at(self, positions: np.ndarray) -> np.ndarray:
        if self._files is None:
            return self.source.ids_at(positions)
        return self._gathered(positions, ids_only=True).ids

    def _gathered(self, positions: np.ndarray, ids_only: bool) -> SampleChunk:
        """The samples at ``positions`` (any order, repeats allowed), read span by span."""
        positions = self._checked_positions(positions)
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
            if not ids_only:
                out.labels[where], out.dense[where] = span.labels[picked], span.dense[picked]
        return out

    def _read(self, start: int, stop: int, ids_only: bool = False) -> SampleChunk:
        """Samples ``start..stop`` from the files (``os.preadv``: threads may read at once)."""
        out = self._empty(stop - start, ids_only)
        arrays = (out.ids,) if ids_only else (out.ids, out.labels, out.dense)
        for file, width, array in zip(self._files, self._widths, arrays):  # type: ignore[arg-type]
            if array.nbytes:
                got = os.preadv(file.fileno(), [memoryview(array).cast("B")], start * width)
                if got != array.nbytes:
                    raise DataError(f"the spilled trace's file ended {array.nbytes - got} bytes "
                                    f"short of samples {start}..{stop - 1}")
        return out

    def _empty(self, n: int, ids_only: bool) -> SampleChunk:
        ids = np.empty((n, self.layout.num_tables), ROW_ID_DTYPE)
        if ids_only:
            return SampleChunk(ids, np.empty(0, np.float32), np.empty((0, self.num_dense)))
        return SampleChunk(ids, np.empty(n, np.float32), np.empty((n, self.num_dense), np.float32))


def _close(files) -> None:
    for file in files:
        file.close()


def _appended(files: tuple[Any, ...], chunk: SampleChunk) -> bool:
    """Append ``chunk``'s ids, labels and dense features to ``files``; False if the disk
    refused (full, or gone)."""
    arrays = (chunk.ids.astype(ROW_ID_DTYPE, copy=False),
              chunk.labels.astype(np.float32, copy=False),
              chunk.dense.astype(np.float32, copy=False))  # fmt: skip
    try:
        for file, array in zip(files, arrays):
            file.write(np.ascontiguousarray(array).data)
    except OSError:
        return False
    return True
