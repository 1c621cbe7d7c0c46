"""numba kernels of one simulated iteration: reads with eviction, and writes.

All state lives in arrays indexed by global row id; worker sets are bitmasks (bit w = worker w).
The kernels mutate the arrays they are given and return counts; they never allocate per access.
See docs/semantics.md for the rules they implement.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from heraldbench.platform.sim._bundles import Evictor, ReadSettings, RowState, Touches
from heraldbench.platform.sim._classify import (
    TOUCH_HIT,
    TOUCH_MISS,
    TOUCH_UPDATE,
    classify_het,
    classify_strict,
)
from heraldbench.platform.sim._eviction import (
    POLICY_LRU,
    evict_lfu,
    evict_lru,
    lfu_touch,
    log_reserve,
    several_bits,
)
from heraldbench.platform.sim._released import touch_lfu_on_insert, touch_lru_evicting

__all__ = [
    "TOUCH_HIT", "TOUCH_MISS", "TOUCH_UPDATE", "read_kernel", "read_lfu", "read_lfu_on_insert",
    "read_lru", "read_lru_evicting", "write_batch",
]  # fmt: skip

@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
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


def read_kernel(settings: ReadSettings) -> Any:
    """The read kernel of a cache's rules (see :func:`_read_workers`): LRU or LFU, and the
    released rules' eviction on insert or LFU on insert. Each kernel compiles its own path
    alone, so a run never compiles the touch steps of rules it does not use."""
    if settings.evict_on_insert:
        return read_lru_evicting
    if settings.policy == POLICY_LRU:
        return read_lru
    return read_lfu_on_insert if settings.lfu_on_insert else read_lfu


@numba.njit(cache=True, nogil=True, inline="always")
def _read_workers(ids, counted, assign, iteration, settings, rows, evictor, touches, counts, touch,
                  evict):  # pragma: no cover - numba
    """Reads of one iteration: classify each worker's unique ids, insert misses, evict.
    ``counted`` is ``ids`` with a ragged table's pads marked -1 (``ids`` itself otherwise): the
    ids HET's per-occurrence clock counts.

    ``bound < 0`` is strict consistency (a copy is stale when its valid bit is clear); ``bound >=
    0`` is HET's bounded staleness (stale when the PS clock leads the copy's, ``lag``, by more
    than bound), where each read copy also takes its updates here (:func:`_hold_updates`).
    ``ascending`` touches each working set in ascending row id. ``touch`` classifies and
    inserts one worker's working set (:func:`_touch_lru`, :func:`_touch_lfu`, or the released
    rules' ``touch_lru_evicting`` and ``touch_lfu_on_insert``: :mod:`._released`) and returns
    the eviction records' length; ``evict`` takes the worker back to its capacity.
    Fills the touch, push and eviction records and returns their lengths; counts[0..2] receive
    hits, miss pulls and update pulls. ``settings``, ``rows``, ``evictor`` and ``touches`` are
    the fields of ``_bundles``' ReadSettings, RowState, Evictor and Touches as plain tuples
    (``_bundles`` says why), named again here.
    """
    settings, rows = ReadSettings(*settings), RowState(*rows)
    evictor, touches = Evictor(*evictor), Touches(*touches)
    workers, capacity, bound = settings.workers, settings.capacity, settings.bound
    occupancy, touched_ids, touched_occ = evictor.occupancy, touches.touched_ids, touches.touched_occ
    order, starts = group_by_worker(assign, workers)
    # Typed counters, not literal zeros: numba would first type the callees they reach with
    # Literal[int](0) and compile each of them twice.
    n_touched = np.int64(0)
    n_evicted = np.int64(0)
    n_pushed = np.int64(0)
    for w in range(workers):
        first = n_touched
        n_touched = _collect_working_set(ids, counted, order, starts[w], starts[w + 1], w,
                                         np.int32(iteration * workers + w + 1), rows.seen,
                                         rows.tally, bound >= 0, touched_ids, touches.touched_w,
                                         touched_occ, n_touched)
        if settings.ascending:
            _sort_working_set(first, n_touched, touched_ids, touched_occ, bound >= 0)
        n_evicted = touch(w, first, n_touched, iteration, settings, touches, rows, evictor,
                          n_evicted, counts)
        if bound >= 0:
            n_pushed = _hold_updates(w, first, n_touched, bound, settings.per_occurrence,
                                     touched_ids, touched_occ, rows.cached, rows.pending,
                                     touches.push_at, touches.push_held, n_pushed)
        need = occupancy[w] - capacity
        if need > 0:
            evict(w, need, iteration, rows, evictor, touches, n_evicted)
            occupancy[w] -= need
            n_evicted += need
    return n_touched, n_evicted, n_pushed


# The read kernels (arguments as :func:`_read_workers`'), one per cache's rules.
@numba.njit(cache=True, nogil=True)
def read_lru(ids, counted, assign, iteration, settings, rows, evictor, touches,
             counts):  # pragma: no cover - numba
    return _read_workers(ids, counted, assign, iteration, settings, rows, evictor, touches, counts,
                         _touch_lru, evict_lru)  # fmt: skip


@numba.njit(cache=True, nogil=True)
def read_lfu(ids, counted, assign, iteration, settings, rows, evictor, touches,
             counts):  # pragma: no cover - numba
    return _read_workers(ids, counted, assign, iteration, settings, rows, evictor, touches, counts,
                         _touch_lfu, evict_lfu)  # fmt: skip


@numba.njit(cache=True, nogil=True)
def read_lru_evicting(ids, counted, assign, iteration, settings, rows, evictor, touches,
                      counts):  # pragma: no cover - numba
    return _read_workers(ids, counted, assign, iteration, settings, rows, evictor, touches, counts,
                         touch_lru_evicting, evict_lru)  # fmt: skip


@numba.njit(cache=True, nogil=True)
def read_lfu_on_insert(ids, counted, assign, iteration, settings, rows, evictor, touches,
                       counts):  # pragma: no cover - numba
    return _read_workers(ids, counted, assign, iteration, settings, rows, evictor, touches, counts,
                         touch_lfu_on_insert, evict_lfu)  # fmt: skip


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _hold_updates(w, first, last, bound, per_occurrence, touched_ids, touched_occ, cached, pending,
                  push_at, push_held, n_pushed):  # pragma: no cover - numba
    """HET's writes of worker w's copies ``first..last``: each gains this iteration's updates
    (one per occurrence, or one) and is pushed once more than ``bound`` are held; the push is
    listed (position in the touch records, updates it carried) for the sync pass, which ages the
    other copies once every worker has read. Done here, right after the worker's reads, while
    its rows' records are still in the CPU's cache: no other worker's reads of this iteration
    depend on it, since a copy's own updates never make it stale. A row the worker no longer
    holds (``ReadRules.lfu_on_insert``) is pushed whatever it carries, and not kept."""
    bit = cached.dtype.type(1 << w)
    for i in range(first, last):
        k = touched_ids[i]
        held = pending[k, w] + (touched_occ[i] if per_occurrence else 1)
        pushed = (held > bound) | ((cached[k] & bit) == 0)
        pending[k, w] = 0 if pushed else held
        push_at[n_pushed] = i
        push_held[n_pushed] = held
        n_pushed += pushed
    return n_pushed


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _touch_lru(w, first, last, iteration, settings, touches, rows, evictor, n_evicted,
               counts):  # pragma: no cover - numba
    """Classify and log worker w's lookups ``first..last``, its misses inserted.

    The hottest loop of the simulator: one pass, no calls, counters in registers, the strict
    classification apart from HET's; the log's rare compaction is done before the loop
    (``log_reserve``). Evicts nothing: returns ``n_evicted``."""
    bound, touched_ids, touched_kind = settings.bound, touches.touched_ids, touches.touched_kind
    cached, valid, lag, pending, last_use = (rows.cached, rows.valid, rows.lag, rows.pending,
                                             rows.last_use)
    log_ids, log_t, log_tail = evictor.log_ids, evictor.log_t, evictor.log_tail
    log_reserve(w, last - first, log_ids, log_t, evictor.log_head, log_tail, cached, last_use)
    tail = log_tail[w]
    hits = 0
    misses = 0
    for i in range(first, last):
        k = touched_ids[i]
        if bound < 0:
            kind = classify_strict(k, w, cached, valid)
        else:
            kind = classify_het(k, w, bound, cached, lag, pending)
        touched_kind[i] = kind
        hits += kind == TOUCH_HIT
        misses += kind == TOUCH_MISS
        last_use[k, w] = iteration
        log_ids[w, tail] = k
        log_t[w, tail] = iteration
        tail += 1
    log_tail[w] = tail
    counts[TOUCH_HIT] += hits
    counts[TOUCH_MISS] += misses
    counts[TOUCH_UPDATE] += last - first - hits - misses
    evictor.occupancy[w] += misses
    return n_evicted


#: Bits of a row id each pass of :func:`_sort_working_set` sorts by.
_RADIX_BITS = 11


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _sort_working_set(first, last, touched_ids, touched_occ, with_occurrences):  # pragma: no cover
    """Put one worker's working set (touch records ``first..last``) in ascending row id, with
    its occurrence counts when they are kept. A working set's ids are distinct and
    non-negative, so a least-significant-digit radix sort gives the one ascending order;
    numba's own sorts cost a fresh checkout seconds of compiling for a rule that only the
    released variants use."""
    n = last - first
    top = 0
    for i in range(first, last):
        top = max(top, touched_ids[i])
    ids, occ = touched_ids[first:last], touched_occ[first:last]
    spare_ids, spare_occ = np.empty(n, ids.dtype), np.empty(n, occ.dtype)
    digits = np.empty((1 << _RADIX_BITS) + 1, np.int64)
    mask, shift, passes = (1 << _RADIX_BITS) - 1, 0, 0
    while n > 1 and top >> shift > 0:
        src_ids, src_occ = (ids, occ) if passes % 2 == 0 else (spare_ids, spare_occ)
        dst_ids, dst_occ = (spare_ids, spare_occ) if passes % 2 == 0 else (ids, occ)
        for d in range(mask + 2):
            digits[d] = 0
        for i in range(n):
            digits[((src_ids[i] >> shift) & mask) + 1] += 1
        for d in range(mask + 1):
            digits[d + 1] += digits[d]
        for i in range(n):
            d = (src_ids[i] >> shift) & mask
            dst_ids[digits[d]] = src_ids[i]
            if with_occurrences:
                dst_occ[digits[d]] = src_occ[i]
            digits[d] += 1
        shift, passes = shift + _RADIX_BITS, passes + 1
    if passes % 2 == 1:  # element by element: a slice copy compiles numba's shape checks
        for i in range(n):
            ids[i] = spare_ids[i]
            if with_occurrences:
                occ[i] = spare_occ[i]


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _touch_lfu(w, first, last, iteration, settings, touches, rows, evictor, n_evicted,
               counts):  # pragma: no cover - numba
    """Classify worker w's lookups ``first..last`` and count them in the LFU heap, its misses
    inserted. Evicts nothing: returns ``n_evicted``."""
    bound, policy, permanent_cap = settings.bound, settings.policy, settings.permanent_cap
    touched_ids, touched_kind = touches.touched_ids, touches.touched_kind
    cached, valid, lag, pending, last_use = (rows.cached, rows.valid, rows.lag, rows.pending,
                                             rows.last_use)
    use_count, permanent, touch_seq = evictor.use_count, evictor.permanent, evictor.touch_seq
    heap_keys, heap_ids, heap_t, heap_size = (evictor.heap_keys, evictor.heap_ids,
                                              evictor.heap_t, evictor.heap_size)
    misses = 0
    for i in range(first, last):
        k = touched_ids[i]
        if bound < 0:
            kind = classify_strict(k, w, cached, valid)
        else:
            kind = classify_het(k, w, bound, cached, lag, pending)
        touched_kind[i] = kind
        counts[kind] += 1
        misses += kind == TOUCH_MISS
        last_use[k, w] = iteration
        lfu_touch(w, k, iteration, kind == TOUCH_MISS, policy, permanent_cap, permanent,
                  use_count, touch_seq, heap_keys, heap_ids, heap_t, heap_size, cached, last_use)
    evictor.occupancy[w] += misses
    return n_evicted


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _collect_working_set(ids, counted, order, lo, hi, w, marker, seen, tally,
                         count_occurrences, touched_ids, touched_w, touched_occ,
                         n_touched):  # pragma: no cover - numba
    """Append worker w's distinct ids in touch order; count each one's occurrences when asked
    (those of ``counted``, the batch's ids with a ragged table's pads marked -1, or ``ids``).

    Occurrences are tallied in the row's record (``tally``, zero between uses) and copied out in
    a second pass over the distinct ids, whose records are then still in the CPU's cache."""
    fields = ids.shape[1]
    first = n_touched
    for j in range(lo, hi):
        s = order[j]
        for f in range(fields):
            k = ids[s, f]
            if count_occurrences:
                tally[k] += counted[s, f] >= 0
            n_touched = _append_if_new(k, marker, seen, touched_ids, n_touched)
    touched_w[first:n_touched] = w
    if count_occurrences:
        for i in range(first, n_touched):
            k = touched_ids[i]
            touched_occ[i] = tally[k]
            tally[k] = 0
    return n_touched


@numba.njit(cache=True, nogil=True)
def write_batch(touched_ids, touched_w, n_touched, writers, valid, optimistic,
                write_ids, write_masks):  # pragma: no cover - numba
    """Writes of one iteration: every touched row is updated by the workers that read it.

    One writer keeps the only valid copy; co-writers leave no valid copy (strict) or all keep
    theirs (optimistic). Returns the number of distinct rows written.
    """
    one = writers.dtype.type(1)
    for i in range(n_touched):
        k = touched_ids[i]
        writers[k] |= one << touched_w[i]
    n_written = 0
    for i in range(n_touched):
        # Branch-free: a row touched by several workers is written out at its first touch
        # (which clears ``writers``) and skipped at the others, where ``mask`` is 0.
        k = touched_ids[i]
        mask = writers[k]
        valid[k] = valid_after_write(mask, optimistic) if mask != 0 else valid[k]
        write_ids[n_written] = k
        write_masks[n_written] = mask
        n_written += mask != 0
        writers[k] = 0
    return n_written


@numba.njit(cache=True, nogil=True, inline="always")
def valid_after_write(writers, optimistic):  # pragma: no cover - numba
    """The valid copies of a row its ``writers`` updated: one writer keeps the only valid copy;
    co-writers leave none (strict) or all keep theirs (optimistic)."""
    return writers if optimistic or not several_bits(writers) else writers ^ writers  # 0, same type


@numba.njit(cache=True, nogil=True)
def enter_window(ids, index, ahead):  # pragma: no cover - numba
    """Batch ``index`` enters the replacement window: it is now the last batch of the window to
    read each of its rows. Plain stores, no read of the row's state: batches enter in order, so
    ``ahead`` only grows, and rows read twice need no deduplication."""
    for i in range(ids.shape[0]):
        for f in range(ids.shape[1]):
            ahead[ids[i, f]] = index


@numba.njit(cache=True, nogil=True, inline="always")
def _append_if_new(k, marker, seen, out, n):  # pragma: no cover - numba
    """Append row k to ``out[:n]`` unless ``seen`` already holds this call's ``marker`` for it;
    returns the new length. Branch-free: k is always written, and kept only if new (about 40%
    of ids are on the Criteo-like trace), so no mispredicted branch holds up the lookups behind."""
    new = seen[k] != marker
    seen[k] = marker
    out[n] = k
    return n + new
