"""Cache rules of the released implementations (``contract.ReadRules``), for their variants.

Each reproduces a choice the authors' code makes where docs/semantics.md makes another
(docs/conformance.md says where in their code it is):

* :func:`touch_lru_evicting`: Herald's snapshot cache (``MiniLRUCache::insert``) evicts as each
  miss is inserted;
* :func:`reread_shared_hits`: Herald's snapshot outdates a key a worker pushes for others
  before the worker reads it;
* :func:`touch_lfu_on_insert`: HET's LFU and LFUOpt caches (``lfu_cache.cc``,
  ``lfuopt_cache.cc`` driven by ``cache.cc``) insert a worker's misses after its lookups,
  each evicting the row with the fewest uses at once, count a use at the lookup and another
  at the update, and leave rows evicted before their update out of the cache.
"""

from __future__ import annotations

import numba
import numpy as np

from heraldbench.platform.sim._classify import (
    TOUCH_HIT,
    TOUCH_MISS,
    TOUCH_UPDATE,
    classify_het,
    classify_strict,
)
from heraldbench.platform.sim._eviction import (
    LFUOPT_LEVELS,
    PERMANENT,
    POLICY_LFU,
    POLICY_LFUOPT,
    evict_lru,
    evict_one,
    lfu_pop_fewest,
    lfu_queue,
    log_reserve,
    several_bits,
)

__all__ = ["reread_shared_hits", "touch_lfu_on_insert", "touch_lru_evicting"]


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def touch_lru_evicting(w, first, last, iteration, settings, touches, rows, evictor, n_evicted,
                       counts):  # pragma: no cover - numba
    """Worker w's lookups ``first..last`` (strict) with Herald's released LRU cache: a miss is
    inserted, and if that takes the cache over its capacity the least recently used row goes
    at once. The victim is never a row touched this iteration (they are the most recent, and
    the cache holds at least one working set), but it may be a row of the working set not
    touched yet, which is then a miss when its turn comes. Returns the eviction records' new
    length. ``settings``, ``touches``, ``rows`` and ``evictor`` are ``_bundles``' ReadSettings,
    Touches, RowState and Evictor."""
    touched_ids, touched_kind = touches.touched_ids, touches.touched_kind
    cached, valid, last_use = rows.cached, rows.valid, rows.last_use
    log_ids, log_t, log_head, log_tail = (evictor.log_ids, evictor.log_t, evictor.log_head,
                                          evictor.log_tail)
    capacity, occupancy = settings.capacity, evictor.occupancy
    for i in range(first, last):
        k = touched_ids[i]
        kind = classify_strict(k, w, cached, valid)
        touched_kind[i] = kind
        counts[kind] += 1
        last_use[k, w] = iteration
        log_reserve(w, np.int64(1), log_ids, log_t, log_head, log_tail, cached, last_use)
        log_ids[w, log_tail[w]] = k
        log_t[w, log_tail[w]] = iteration
        log_tail[w] += 1
        occupancy[w] += kind == TOUCH_MISS
        if occupancy[w] > capacity:
            evict_lru(w, 1, iteration, rows, evictor, touches, n_evicted)
            occupancy[w] -= 1
            n_evicted += 1
    return n_evicted


@numba.njit(cache=True, nogil=True)
def reread_shared_hits(touched_ids, touched_w, touched_kind, n_touched, writers,
                       counts):  # pragma: no cover - numba
    """``ReadRules.reread_pushed``: a hit on a row that another worker also reads this
    iteration becomes an update pull (counts[0] hits, counts[2] update pulls). Leaves each
    touched row's readers in ``writers``, as the write kernels then set them."""
    one = writers.dtype.type(1)
    for i in range(n_touched):
        writers[touched_ids[i]] |= one << touched_w[i]
    moved = 0
    for i in range(n_touched):
        shared = several_bits(writers[touched_ids[i]])
        hit = touched_kind[i] == TOUCH_HIT
        touched_kind[i] = TOUCH_UPDATE if hit and shared else touched_kind[i]
        moved += hit and shared
    counts[TOUCH_HIT] -= moved
    counts[TOUCH_UPDATE] += moved


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def touch_lfu_on_insert(w, first, last, iteration, settings, touches, rows, evictor, n_evicted,
                        counts):  # pragma: no cover - numba
    """Worker w's lookups ``first..last`` (bounded staleness) with HET's released LFU or
    LFUOpt cache, in the three steps of one iteration there (cache.cc):

    1. lookups: each row held counts a use (LFUOpt: a row at its tenth use moves to the
       permanent store, which is never evicted and has no limit of its own);
    2. inserts, in touch order: when the cache is full, each evicts the row with the fewest
       uses, the earliest to reach that count, at once: often a row inserted just before in
       the same step, whose only use is its insert (LFU counts it 1, LFUOpt 0), at times a row
       looked up in step 1. LFUOpt inserts nothing when only permanent rows are left;
    3. the update's lookups: each row still held counts another use. A row not held then (not
       kept, or evicted in step 2) takes its update straight to the PS (``_hold_updates``).

    Returns the eviction records' new length (bundles as :func:`touch_lru_evicting`, with
    ``_bundles``' ReadSettings)."""
    bound, policy, capacity = settings.bound, settings.policy, settings.capacity
    touched_ids, touched_kind = touches.touched_ids, touches.touched_kind
    evicted_ids, evicted_w, evicted_pending = (touches.evicted_ids, touches.evicted_w,
                                               touches.evicted_pending)
    cached, valid, lag, pending, last_use = (rows.cached, rows.valid, rows.lag, rows.pending,
                                             rows.last_use)
    use_count, touch_seq, occupancy = evictor.use_count, evictor.touch_seq, evictor.occupancy
    heap_keys, heap_ids, heap_t, heap_size = (evictor.heap_keys, evictor.heap_ids,
                                              evictor.heap_t, evictor.heap_size)
    bit = cached.dtype.type(1 << w)
    for i in range(first, last):
        k = touched_ids[i]
        kind = classify_het(k, w, bound, cached, lag, pending)
        touched_kind[i] = kind
        counts[kind] += 1
        last_use[k, w] = iteration
        if kind != TOUCH_MISS:
            _use(w, k, iteration, policy, use_count, touch_seq, heap_keys, heap_ids, heap_t,
                 heap_size, cached, last_use)
    for i in range(first, last):
        k = touched_ids[i]
        if touched_kind[i] != TOUCH_MISS:
            continue
        cached[k] = cached[k] & ~bit  # not inserted yet
        if occupancy[w] >= capacity:
            victim = lfu_pop_fewest(w, heap_keys, heap_ids, heap_t, heap_size, cached, last_use,
                                    use_count)
            if victim < 0:
                continue
            evict_one(victim, w, cached, valid, pending, evicted_ids, evicted_w, evicted_pending,
                      n_evicted)
            n_evicted += 1
            occupancy[w] -= 1
        cached[k] = cached[k] | bit
        occupancy[w] += 1
        use_count[k, w] = 1 if policy == POLICY_LFU else 0
        lfu_queue(w, k, iteration, use_count, touch_seq, heap_keys, heap_ids, heap_t, heap_size,
                  cached, last_use)
    for i in range(first, last):
        k = touched_ids[i]
        if cached[k] & bit:
            _use(w, k, iteration, policy, use_count, touch_seq, heap_keys, heap_ids, heap_t,
                 heap_size, cached, last_use)
    return n_evicted


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _use(w, k, iteration, policy, use_count, touch_seq, heap_keys, heap_ids, heap_t, heap_size,
         cached, last_use):  # pragma: no cover - numba
    """One use of a held row (HET's LFUCache::_increase, LFUOptCache::lookup)."""
    if use_count[k, w] == PERMANENT:
        return
    if policy == POLICY_LFUOPT and use_count[k, w] + 1 >= LFUOPT_LEVELS:
        use_count[k, w] = PERMANENT
        return
    use_count[k, w] += 1
    lfu_queue(w, k, iteration, use_count, touch_seq, heap_keys, heap_ids, heap_t, heap_size,
              cached, last_use)
