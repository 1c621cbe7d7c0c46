"""Statistics a profile is judged by: the LRU miss-ratio curve and the figures of a fit."""

from __future__ import annotations

import math

import numba
import numpy as np

from heraldbench.platform.data.calibration import top_share

__all__ = ["MRC_FRACTIONS", "describe_ids", "miss_ratio_curve", "stack_distances"]

#: Cache sizes of the miss-ratio curve, as fractions of the trace's distinct rows.
MRC_FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)


@numba.njit(cache=True)
def stack_distances(ids, rows):  # pragma: no cover - numba
    """LRU stack distance of every access (distinct rows since its row's previous access; -1 on
    a first access), in O(n log n) with a Fenwick tree over positions."""
    n = ids.shape[0]
    last = np.full(rows, -1, np.int64)
    tree = np.zeros(n + 1, np.int64)
    out = np.empty(n, np.int64)
    for t in range(n):
        row = ids[t]
        previous = last[row]
        if previous < 0:
            out[t] = -1
        else:
            total, i = 0, t
            while i > 0:
                total += tree[i]
                i -= i & -i
            i = previous + 1
            while i > 0:
                total -= tree[i]
                i -= i & -i
            out[t] = total
            i = previous + 1
            while i <= n:
                tree[i] -= 1
                i += i & -i
        i = t + 1
        while i <= n:
            tree[i] += 1
            i += i & -i
        last[row] = t
    return out


def miss_ratio_curve(ids: np.ndarray, distinct: int | None = None,
                     fractions: tuple[float, ...] = MRC_FRACTIONS) -> dict[str, float]:  # fmt: skip
    """Miss ratio of one LRU cache over the whole access stream (sample order, field order), at
    caches of each fraction of ``distinct`` rows (default: the stream's own distinct rows)."""
    flat = np.ascontiguousarray(np.asarray(ids).reshape(-1)).astype(np.int64)
    if not flat.size:
        return {f"{f:g}": 1.0 for f in fractions}
    _, dense = np.unique(flat, return_inverse=True)
    rows = int(dense.max()) + 1
    distances = stack_distances(dense.astype(np.int64), rows)
    distinct = distinct or rows
    return {
        f"{f:g}": float(((distances < 0) | (distances >= max(1, math.floor(f * distinct)))).mean())
        for f in fractions
    }


def describe_ids(ids: np.ndarray) -> dict[str, float | int]:
    """Headline figures of a block of ids: accesses, distinct rows, top-1% share, singletons."""
    flat = np.asarray(ids).reshape(-1)
    _, counts = np.unique(flat, return_counts=True)
    return {
        "samples": int(ids.shape[0]),
        "accesses": int(flat.size),
        "distinct_rows": int(counts.size),
        "top1pct_share": round(top_share(counts, math.ceil(0.01 * counts.size)), 4),
        "rows_seen_once_fraction": round(float((counts == 1).mean()) if counts.size else 0.0, 4),
    }
