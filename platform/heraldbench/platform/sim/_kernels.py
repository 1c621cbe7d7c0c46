"""numba kernels of one simulated iteration: reads with eviction, and writes.

All state lives in arrays indexed by global row id; worker sets are bitmasks (bit w = worker w).
The kernels mutate the arrays they are given and return counts; they never allocate per access.
See docs/semantics.md for the rules they implement.
"""

from __future__ import annotations

import numba
import numpy as np

from heraldbench.platform.sim._eviction import (
    POLICY_LRU,
    bit_of,
    evict_lfu,
    evict_lru,
    lfu_touch,
    log_touch,
    popcount,
)

TOUCH_HIT, TOUCH_MISS, TOUCH_UPDATE = 0, 1, 2  # also the index of each in the counts array

@numba.njit(cache=True)
def group_by_worker(assign, workers):  # pragma: no cover - numba
    """Sample indices sorted by worker, each worker's in ascending order, plus group starts."""
    starts = np.zeros(workers + 1, dtype=np.int64)
    for i in range(assign.shape[0]):
        starts[assign[i] + 1] += 1
    for w in range(workers):
        starts[w + 1] += starts[w]
    fill = starts[:-1].copy()
    order = np.empty(assign.shape[0], dtype=np.int64)
    for i in range(assign.shape[0]):
        w = assign[i]
        order[fill[w]] = i
        fill[w] += 1
    return order, starts


@numba.njit(cache=True)
def read_batch(
    ids, assign, iteration, workers, capacity, policy, permanent_cap, bound,
    cached, valid, last_use, seen, occupancy, protect,
    log_ids, log_t, log_head, log_tail,
    use_count, permanent, heap_keys, heap_ids, heap_t, heap_size, touch_seq,
    clock, version, pending, touch_pos,
    touched_ids, touched_w, touched_kind, touched_occ,
    evicted_ids, evicted_w, evicted_pending, counts,
):  # pragma: no cover - numba
    """Reads of one iteration: classify each worker's unique ids, insert misses, evict.

    ``bound < 0`` is strict consistency (a copy is stale when its valid bit is clear); ``bound >=
    0`` is HET's bounded staleness (stale when the PS clock leads the copy's by more than bound).
    Fills the touch and eviction records and returns their lengths; counts[0..2] receive hits,
    miss pulls and update pulls.
    """
    order, starts = group_by_worker(assign, workers)
    n_touched = 0
    n_evicted = 0
    for w in range(workers):
        first = n_touched
        n_touched = _collect_working_set(ids, order, starts[w], starts[w + 1], w,
                                         np.int32(iteration * workers + w + 1), seen, touch_pos,
                                         bound >= 0, touched_ids, touched_w, touched_occ,
                                         n_touched)
        for i in range(first, n_touched):
            k = touched_ids[i]
            kind = _classify(k, w, bound, cached, valid, clock, version, pending)
            touched_kind[i] = kind
            counts[kind] += 1
            if kind == TOUCH_MISS:
                occupancy[w] += 1
            last_use[k, w] = iteration
            if policy == POLICY_LRU:
                log_touch(w, k, iteration, log_ids, log_t, log_head, log_tail, cached, last_use)
            else:
                lfu_touch(w, k, iteration, kind == TOUCH_MISS, policy, permanent_cap, permanent,
                          use_count, touch_seq, heap_keys, heap_ids, heap_t, heap_size, cached,
                          last_use)
        need = occupancy[w] - capacity
        if need > 0:
            if policy == POLICY_LRU:
                evict_lru(w, need, iteration, cached, valid, pending, last_use, protect, log_ids,
                          log_t,
                          log_head, log_tail, evicted_ids, evicted_w, evicted_pending, n_evicted)
            else:
                evict_lfu(w, need, iteration, cached, valid, pending, last_use, protect,
                          use_count, heap_keys, heap_ids, heap_t, heap_size, evicted_ids,
                          evicted_w, evicted_pending, n_evicted)
            occupancy[w] -= need
            n_evicted += need
    return n_touched, n_evicted


@numba.njit(cache=True)
def _collect_working_set(ids, order, lo, hi, w, marker, seen, touch_pos, count_occurrences,
                         touched_ids, touched_w, touched_occ, n_touched):  # pragma: no cover
    """Append worker w's distinct ids in touch order; count occurrences when asked."""
    fields = ids.shape[1]
    for j in range(lo, hi):
        s = order[j]
        for f in range(fields):
            k = ids[s, f]
            if seen[k] != marker:
                seen[k] = marker
                touched_ids[n_touched] = k
                touched_w[n_touched] = w
                if count_occurrences:
                    touch_pos[k] = n_touched
                    touched_occ[n_touched] = 1
                n_touched += 1
            elif count_occurrences:
                touched_occ[touch_pos[k]] += 1
    return n_touched


@numba.njit(cache=True)
def _classify(k, w, bound, cached, valid, clock, version, pending):  # pragma: no cover - numba
    """Hit, miss pull or update pull of row k at worker w; a pull refreshes the copy."""
    bit = bit_of(w)
    mask = np.uint64(cached[k])
    if mask & bit == 0:
        cached[k] = mask | bit
        if bound >= 0:
            version[k, w] = clock[k]
            pending[k, w] = 0
        return TOUCH_MISS
    if bound < 0:
        return TOUCH_HIT if np.uint64(valid[k]) & bit else TOUCH_UPDATE
    if clock[k] - version[k, w] > bound:
        version[k, w] = clock[k]  # local unpushed updates survive the refresh (HET)
        return TOUCH_UPDATE
    return TOUCH_HIT


@numba.njit(cache=True)
def write_batch(touched_ids, touched_w, n_touched, writers, valid, optimistic,
                write_ids, write_masks):  # pragma: no cover - numba
    """Writes of one iteration: every touched row is updated by the workers that read it.

    One writer keeps the only valid copy; co-writers leave no valid copy (strict) or all keep
    theirs (optimistic). Returns the number of distinct rows written.
    """
    for i in range(n_touched):
        k = touched_ids[i]
        writers[k] = np.uint64(writers[k]) | bit_of(touched_w[i])
    n_written = 0
    for i in range(n_touched):
        k = touched_ids[i]
        mask = np.uint64(writers[k])
        if mask == 0:
            continue
        if optimistic or popcount(mask) == 1:
            valid[k] = mask
        else:
            valid[k] = 0
        write_ids[n_written] = k
        write_masks[n_written] = mask
        n_written += 1
        writers[k] = 0
    return n_written




@numba.njit(cache=True)
def count_batch_rows(ids, marker, seen, counts, delta):  # pragma: no cover - numba
    """counts[k] += delta once for each distinct row k of a batch (``marker`` unique per call)."""
    for i in range(ids.shape[0]):
        for f in range(ids.shape[1]):
            k = ids[i, f]
            if seen[k] != marker:
                seen[k] = marker
                counts[k] += delta
