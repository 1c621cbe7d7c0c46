"""The most read rows of a table without sorting it: a histogram of read counts gives the
count threshold in one pass (read counts are bounded by the trace's reads)."""

from __future__ import annotations

import numpy as np

__all__ = ["most_read", "top_read_sums"]


def _threshold(counts: np.ndarray, n: int) -> tuple[int, int]:
    """(t, k): the ``n`` most read rows are every row read more than ``t`` times and ``k``
    rows read exactly ``t`` times."""
    histogram = np.bincount(counts)
    above = np.cumsum(histogram[::-1])[::-1]  # above[c]: rows read c times or more
    t = int(np.flatnonzero(above >= n)[-1])  # the most reads still reached by n rows
    more = int(above[t + 1]) if t + 1 < len(above) else 0
    return t, n - more


def most_read(counts: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` most read rows (ties broken by the lowest index), unordered."""
    n = min(n, counts.size)
    if n <= 0:
        return np.zeros(0, np.int64)
    t, ties = _threshold(counts, n)
    return np.concatenate([np.flatnonzero(counts > t), np.flatnonzero(counts == t)[:ties]])


def top_read_sums(counts: np.ndarray, sizes: list[int]) -> list[float]:
    """Reads of the ``n`` most read rows, for each ``n`` in ``sizes``."""
    histogram = np.bincount(counts)[::-1]
    values = np.arange(len(histogram))[::-1].astype(np.float64)
    rows, reads = np.cumsum(histogram), np.cumsum(histogram * values)
    out = []
    for n in sizes:
        n = min(n, counts.size)
        i = int(np.searchsorted(rows, n))  # the value group where the n-th row falls
        before = (rows[i - 1], reads[i - 1]) if i else (0, 0.0)
        out.append(float(before[1] + (n - before[0]) * values[i]) if n else 0.0)
    return out
