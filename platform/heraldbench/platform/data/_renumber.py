"""Row ids renumbered in order of first appearance, table by table: the simulator's view of a trace.

Why: the simulator keeps its state in arrays indexed by row id, and its speed at Criteo scale is
set by how many of those arrays' cache lines one lookup touches. Numbered by first
appearance, the popular rows (seen early) sit together at the front of each table and the cold
rows of a time window sit together too, so a lookup mostly hits lines already in the CPU's cache;
numbered at random, as the synthetic generator scatters them, each lookup is a trip to DRAM.
This is also how the raw-format readers number rows (data/_vocab.py), so a real trace is already
in this order. Modelling assumption: no scheduler's decision depends on *which* number a row has,
only on which reads share a row; the differential tests run the simulator on renumbered traces
against the reference on the original ones. Schedulers that rank rows by number (FAE breaks ties
in access count by the smaller row id) prepare their trace before it is renumbered.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numba
import numpy as np

from heraldbench.platform.data._trace import ROW_ID_DTYPE, SampleChunk, TraceSource

__all__ = ["FirstSeenTrace"]

_BLOCK_SAMPLES = 1 << 16


class FirstSeenTrace(TraceSource):
    """``source`` with each table's rows renumbered in order of first appearance.

    Same samples, order, labels, dense features and table layout; row ``offset_f + j`` of the
    result is the ``j``-th distinct row of table f in the source. The mapping is rebuilt on every
    pass (it is a function of the trace alone), in 4 bytes per row.
    """

    def __init__(self, source: TraceSource) -> None:
        self.source = source
        self.layout = source.layout
        self.num_samples = source.num_samples
        self.num_dense = source.num_dense
        self._number = np.zeros(0, ROW_ID_DTYPE)  # the current pass's mapping

    def renumbered(self, rows: np.ndarray) -> np.ndarray:
        """The new ids of those of ``rows`` (original ids) that the current pass has numbered.

        Rows not numbered yet are left out: nothing downstream of the pass has seen them. A
        consumer on another thread than the pass sees at least every row of the chunks it was
        handed (the mapping only grows).
        """
        if not self._number.size:
            return np.zeros(0, ROW_ID_DTYPE)
        new = self._number[np.asarray(rows, dtype=np.int64)]
        return new[new > 0] - 1

    def describe(self) -> dict[str, Any]:
        return self.source.describe()

    def _blocks(self) -> Iterator[SampleChunk]:
        return self._renumbered(ids_only=False)

    def _id_blocks(self) -> Iterator[SampleChunk]:
        return self._renumbered(ids_only=True)

    def _renumbered(self, ids_only: bool) -> Iterator[SampleChunk]:
        number = np.zeros(self.layout.total_rows, ROW_ID_DTYPE)  # new id + 1; 0: not seen yet
        self._number = number
        offsets = self.layout.offsets.astype(np.int64)
        next_free = offsets.copy()
        for chunk in self.source.chunks(_BLOCK_SAMPLES, ids_only):
            ids = np.empty_like(chunk.ids, dtype=ROW_ID_DTYPE)
            _renumber(chunk.ids, ids, number, offsets, next_free)
            yield SampleChunk(ids, chunk.labels, chunk.dense, chunk.lengths)


@numba.njit(cache=True, nogil=True)
def _renumber(ids, out, number, offsets, next_free):  # pragma: no cover - numba
    """out = ids under the first-seen numbering, extending it with the rows seen for the first
    time (in sample order, field by field); a new row keeps its table."""
    for i in range(ids.shape[0]):
        for f in range(ids.shape[1]):
            k = ids[i, f]
            new = number[k]
            if new == 0:
                table = np.searchsorted(offsets, k, side="right") - 1
                next_free[table] += 1
                new = next_free[table]
                number[k] = new
            out[i, f] = new - 1
