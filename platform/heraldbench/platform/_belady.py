"""Belady's MIN at iteration granularity, one cache per worker (the pull half of ``bounds``).

Input is the *row-iteration table* built by :mod:`heraldbench.platform.bounds`: for every
iteration b (entries ``starts[b]:starts[b + 1]``) the distinct rows read in b, each with the
bitmask of the workers that read it and ``next_use``, the iteration at which that access's
version-renamed key is read again (``NEVER`` when the copy is dead: a co-write or another
worker's write comes first, or the row is never read again).

Why furthest-in-future stays optimal when a whole set must be resident at once. Iteration b asks
for the set S_b (|S_b| <= K) and no row of S_b may leave the cache while b runs. MIN loads the
missing rows of S_b and evicts, from the rows *outside* S_b, those whose next use is furthest.
Take an optimal lazy schedule OPT (it only evicts to make room) that agrees with MIN before b
and, at b, evicts f where MIN evicts e (both outside S_b, next(e) >= next(f)). OPT' evicts e
instead and then copies OPT, holding f where OPT holds e, until the first of: OPT evicts e at some
c < next(f) (OPT' evicts f there, f not in S_c, and the caches agree again); iteration next(f)
arrives (OPT misses f and evicts some g, OPT' hits; if g = e the caches agree, otherwise OPT' is
OPT minus e and OPT' loads e later at most once, paying back the miss it saved); or e and f are
both requested at next(f) = next(e) (each misses one, evicting the same g, caches agree). OPT'
is feasible at every step (it never evicts a row of the current set) and misses no more than
OPT, so by induction over the iterations MIN's choices are optimal. Dead keys (next use NEVER)
are evicted first. A dead copy of a row the worker reads again is refreshed in place: that is
MIN evicting the dead key (one of its furthest-in-future choices) and loading the new one.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

__all__ = ["NEVER", "min_misses"]

NEVER = np.int32(2**31 - 1)  # next use of a dead key
_UNSEEN = np.int32(-1)  # next-use slot of a row the worker has never read
_LOW32 = np.int64(0xFFFFFFFF)


def min_misses(
    rows: np.ndarray,
    masks: np.ndarray,
    next_use: np.ndarray,
    starts: np.ndarray,
    *,
    workers: int,
    num_rows: int,
    capacity: int,
) -> np.ndarray:
    """MIN's misses for every worker; returns (workers, 3) int64: misses, compulsory, coherence.

    A *compulsory* miss is the worker's first read of a row; a *coherence* miss is a read of a
    new key (the worker's copy went dead); the rest are capacity misses.
    """
    out = np.zeros((workers, 3), np.int64)

    def one(w: int) -> None:
        out[w] = _one_worker(rows, masks, next_use, starts, w, num_rows, capacity)

    # Workers in threads (the kernel releases the GIL), not numba's parallel loop: its compiling
    # cost a fresh checkout seconds and compiled the kernel twice.
    with ThreadPoolExecutor(min(workers, os.cpu_count() or 1)) as pool:
        list(pool.map(one, range(workers)))
    return out


@numba.njit(cache=True, nogil=True)
def _one_worker(rows, masks, next_use, starts, w, num_rows, capacity):  # pragma: no cover - numba
    """MIN over worker w's renamed stream. State per row: cached flag and the next use of the
    worker's current key of that row (``_UNSEEN``, ``NEVER`` or an iteration)."""
    bit = np.uint64(1) << np.uint64(w)
    cached = np.zeros(num_rows, np.bool_)
    nxt = np.full(num_rows, _UNSEEN, np.int32)
    heap = np.empty(max(2 * min(capacity, num_rows), 1024), np.int64)  # K >= rows: no evictions
    size = np.int64(0)
    occupancy = 0
    misses = compulsory = coherence = 0
    for b in range(starts.shape[0] - 1):
        lo, hi = starts[b], starts[b + 1]
        loads = 0
        for e in range(lo, hi):
            if (np.uint64(masks[e]) & bit) == 0:
                continue
            r = rows[e]
            if nxt[r] != b:  # a new key: first read, or the old copy is dead
                misses += 1
                if nxt[r] == _UNSEEN:
                    compulsory += 1
                else:
                    coherence += 1
            elif not cached[r]:
                misses += 1  # a live key evicted earlier: capacity miss
            if not cached[r]:
                cached[r] = True
                loads += 1
            nxt[r] = b  # marks the current set; voids a dead copy's heap entry
        occupancy += loads
        while occupancy > capacity:
            size, victim = _pop_victim(heap, size, cached, nxt, b)
            cached[victim] = False
            occupancy -= 1
        if size + (hi - lo) > heap.shape[0]:
            heap, size = _compact(heap, size, cached, nxt, hi - lo)
        for e in range(lo, hi):
            if np.uint64(masks[e]) & bit:
                r = rows[e]
                nxt[r] = next_use[e]
                size = _push(heap, size, (np.int64(nxt[r]) << 32) | np.int64(r))
    return misses, compulsory, coherence


@numba.njit(cache=True, no_cpython_wrapper=True)
def _pop_victim(heap, size, cached, nxt, b):  # pragma: no cover - numba
    """Pop live entries until the furthest-in-future cached row outside the current set.

    An entry (next use, row) is live while the row is cached and its next use is unchanged.
    Rows of the current set carry next use b, below every row outside it, and the rows outside
    it outnumber the evictions needed (|S_b| <= K), so the victim is never a current row."""
    while size > 0:
        top = heap[0]
        size = _pop(heap, size)
        r = np.int32(top & _LOW32)
        when = np.int32(top >> 32)
        if cached[r] and nxt[r] == when:
            if when <= b:
                raise AssertionError("MIN would evict a row of the current iteration")
            return size, r
    raise AssertionError("MIN's heap ran empty with the cache over capacity")


@numba.njit(cache=True, no_cpython_wrapper=True)
def _compact(heap, size, cached, nxt, room):  # pragma: no cover - numba
    """Drop dead entries and rebuild; grow the array when live entries fill half of it."""
    kept = np.int64(0)
    for i in range(size):
        r = np.int32(heap[i] & _LOW32)
        if cached[r] and nxt[r] == np.int32(heap[i] >> 32):
            heap[kept] = heap[i]
            kept += 1
    if 2 * (kept + room) > heap.shape[0]:
        bigger = np.empty(2 * (kept + room), np.int64)
        for i in range(kept):  # not a slice copy: that compiles numba's shape checks (seconds)
            bigger[i] = heap[i]
        heap = bigger
    for i in range(kept // 2 - 1, -1, -1):
        _sift_down(heap, kept, i)
    return heap, kept


@numba.njit(cache=True, inline="always")
def _push(heap, size, key):  # pragma: no cover - numba
    """Insert into a binary max-heap; returns the new size."""
    i = size
    heap[i] = key
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] >= key:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = key
    return size + 1


@numba.njit(cache=True, inline="always")
def _pop(heap, size):  # pragma: no cover - numba
    """Remove the maximum (heap[0]); returns the new size."""
    size -= 1
    if size > 0:
        heap[0] = heap[size]
        _sift_down(heap, size, np.int64(0))
    return size


@numba.njit(cache=True, no_cpython_wrapper=True)
def _sift_down(heap, size, i):  # pragma: no cover - numba
    key = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] > heap[child]:
            child += 1
        if heap[child] <= key:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = key
