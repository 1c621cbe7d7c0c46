"""A trace's access statistics: how often each row of each table is read."""

from __future__ import annotations

import numpy as np

from heraldbench.platform.data import TraceSource
from heraldbench.platform.placements.jagged import JaggedIds
from heraldbench.platform.placements.types import AccessStats

__all__ = ["access_stats", "jagged_batches", "stats_of_batches"]


def jagged_batches(source: TraceSource, samples: int):
    """The trace's chunks of ``samples`` samples as :class:`JaggedIds`."""
    offsets = source.layout.offsets
    widths = np.asarray(source.layout.table_widths, np.int64)
    for chunk in source.chunks(samples, ids_only=True):
        yield JaggedIds.from_columns(chunk.ids, offsets, widths, chunk.lengths)


def stats_of_batches(batches, sizes: tuple[int, ...]) -> AccessStats:
    counts = [np.zeros(size, np.int64) for size in sizes]
    samples = 0
    for batch in batches:
        starts = batch.table_starts()
        for t, size in enumerate(sizes):
            counts[t] += np.bincount(batch.values[starts[t]: starts[t + 1]], minlength=size)
        samples += batch.samples
    return AccessStats(tuple(counts), samples)


def access_stats(source: TraceSource, chunk_samples: int = 1 << 20) -> AccessStats:
    """Read counts of every row of ``source``, per table, in one pass."""
    return stats_of_batches(jagged_batches(source, chunk_samples), source.layout.sizes)
