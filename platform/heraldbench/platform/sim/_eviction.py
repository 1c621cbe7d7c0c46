"""Eviction structures of the simulated caches, one per worker.

LRU: a log of (row, iteration) touches in touch order; an entry is live while the row is cached at
that worker and was last touched in that iteration, so the first live entry is the LRU victim.
LFU and LFUOpt: a binary min-heap keyed by (use count, touch sequence) with lazy deletion: an entry
is live while the row's count and last iteration still match it. LFUOpt (HET) caps counts at
``LFUOPT_LEVELS`` and moves a row that reaches the cap to a permanent store that is never evicted;
unlike HET, the store is limited to K - m·F rows, so one iteration's working set always fits.
"""

from __future__ import annotations

import numba
import numpy as np

POLICY_LRU, POLICY_LFU, POLICY_LFUOPT = 0, 1, 2
LFUOPT_LEVELS = 10
PERMANENT = np.int32(1 << 30)  # use count of a row in LFUOpt's permanent store
_SCAN_BLOCK = 64  # LRU log entries checked at a time when evicting

_one = np.uint64(1)
_M1, _M2 = np.uint64(0x5555555555555555), np.uint64(0x3333333333333333)
_M4, _H01 = np.uint64(0x0F0F0F0F0F0F0F0F), np.uint64(0x0101010101010101)


@numba.njit(cache=True, nogil=True, inline="always")
def popcount(mask):  # pragma: no cover - numba
    """Set bits of ``mask``, branch-free (the bit-parallel sum): worker sets are unpredictable,
    and a loop over their bits mispredicts its exit."""
    m = np.uint64(mask)
    m = m - ((m >> np.uint64(1)) & _M1)
    m = (m & _M2) + ((m >> np.uint64(2)) & _M2)
    m = (m + (m >> np.uint64(4))) & _M4
    return np.int64((m * _H01) >> np.uint64(56))


@numba.njit(cache=True, nogil=True, inline="always")
def several_bits(mask):  # pragma: no cover - numba
    """More than one bit set (more than one worker), without counting them."""
    m = np.uint64(mask)
    return (m & (m - _one)) != 0


@numba.njit(cache=True, nogil=True, inline="always")
def bit_of(w):  # pragma: no cover - numba
    return _one << np.uint64(w)


@numba.njit(cache=True, nogil=True, inline="always")
def kept(field):  # pragma: no cover - numba
    """The run keeps this per-row field: it is not a zero-stride stand-in
    (``_state.absent_field``)."""
    return field.strides[0] != 0


# ---- eviction structures ---------------------------------------------------------------------
@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _log_compact(w, log_ids, log_t, head, tail, cached, last_use):  # pragma: no cover
    bit = cached.dtype.type(1 << w)
    out = 0
    for i in range(head[w], tail[w]):
        # Branch-free (every entry is copied, kept only if live): liveness is unpredictable, and
        # a mispredicted branch would make each entry's row lookup wait for the one before.
        k = log_ids[w, i]
        t = log_t[w, i]
        log_ids[w, out] = k
        log_t[w, out] = t
        out += ((cached[k] & bit) != 0) & (last_use[k, w] == t)
    head[w] = 0
    tail[w] = out


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _heap_swap(keys, hids, hts, w, a, b):  # pragma: no cover - numba
    keys[w, a], keys[w, b] = keys[w, b], keys[w, a]
    hids[w, a], hids[w, b] = hids[w, b], hids[w, a]
    hts[w, a], hts[w, b] = hts[w, b], hts[w, a]


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _heap_push(keys, hids, hts, size, w, key, k, t):  # pragma: no cover - numba
    i = size[w]
    keys[w, i] = key
    hids[w, i] = k
    hts[w, i] = t
    size[w] += 1
    while i > 0:
        parent = (i - 1) // 2
        if keys[w, i] < keys[w, parent]:
            _heap_swap(keys, hids, hts, w, i, parent)
            i = parent
        else:
            break


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _heap_pop(keys, hids, hts, size, w):  # pragma: no cover - numba
    k, t, key = hids[w, 0], hts[w, 0], keys[w, 0]
    size[w] -= 1
    n = size[w]
    if n > 0:
        keys[w, 0], hids[w, 0], hts[w, 0] = keys[w, n], hids[w, n], hts[w, n]
        i = 0
        while True:
            left, right, smallest = 2 * i + 1, 2 * i + 2, i
            if left < n and keys[w, left] < keys[w, smallest]:
                smallest = left
            if right < n and keys[w, right] < keys[w, smallest]:
                smallest = right
            if smallest == i:
                break
            _heap_swap(keys, hids, hts, w, i, smallest)
            i = smallest
    return k, t, key


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _lfu_live(w, k, t, key, cached, last_use, use_count):  # pragma: no cover - numba
    """A heap entry (row k, iteration t, key) is live while the row is held and its last touch
    and use count still match the entry."""
    held = (np.uint64(cached[k]) & bit_of(w)) != 0
    return held & (last_use[k, w] == t) & (use_count[k, w] == (key >> 36))


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _heap_compact(w, keys, hids, hts, size, cached, last_use, use_count):  # pragma: no cover
    live = 0
    for i in range(size[w]):
        if _lfu_live(w, hids[w, i], hts[w, i], keys[w, i], cached, last_use, use_count):
            keys[w, live], hids[w, live], hts[w, live] = keys[w, i], hids[w, i], hts[w, i]
            live += 1
    size[w] = 0
    for i in range(live):  # re-heapify by pushing (entries already sit in the prefix)
        _heap_push(keys, hids, hts, size, w, keys[w, i], hids[w, i], hts[w, i])


@numba.njit(cache=True, nogil=True, inline="always")
def _drop(k, w, cached, valid, evicted_ids, evicted_w, slot):  # pragma: no cover - numba
    """Evict worker w's copy of row k into eviction record ``slot``. No branches: an array handed
    to an inlined helper that branches costs two atomic reference counts per call."""
    bit = bit_of(w)
    cached[k] = np.uint64(cached[k]) & ~bit
    valid[k] = np.uint64(valid[k]) & ~bit
    evicted_ids[slot] = k
    evicted_w[slot] = w


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _take_pending(first, last, evicted_ids, evicted_w, pending,
                  evicted_pending):  # pragma: no cover - numba
    """Bounded staleness: the unpushed updates of the copies evicted into slots first..last leave
    with them."""
    if not kept(pending):
        return
    for slot in range(first, last):
        k, w = evicted_ids[slot], evicted_w[slot]
        evicted_pending[slot] = pending[k, w]
        pending[k, w] = 0


@numba.njit(cache=True, nogil=True, inline="always")
def _protected(k, ahead, iteration):  # pragma: no cover - numba
    """Row k is read again within the replacement window (see ``_Run._batches``)."""
    return ahead[k] > iteration


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def evict_lru(w, need, iteration, rows, evictor, touches, first_slot):  # pragma: no cover
    """Evict ``need`` least recently used rows, never one of this iteration; rows in
    the replacement window (read again within it: ``ahead`` > iteration) are passed over, unless
    every cached row is protected. Passed-over entries go back to the young end of the log.
    ``rows``, ``evictor`` and ``touches`` are ``_bundles``' RowState, Evictor and Touches; the
    evicted rows fill the eviction records from ``first_slot``."""
    cached, valid, pending, last_use, ahead = (rows.cached, rows.valid, rows.pending,
                                               rows.last_use, rows.ahead)
    log_ids, log_t, log_head, log_tail = (evictor.log_ids, evictor.log_t, evictor.log_head,
                                          evictor.log_tail)
    evicted_ids, evicted_w, evicted_pending = (touches.evicted_ids, touches.evicted_w,
                                               touches.evicted_pending)
    bit = cached.dtype.type(1 << w)
    done = 0
    # without a replacement window (no ``ahead`` kept) nothing is passed over
    passes_left = log_tail[w] - log_head[w] if kept(ahead) else 0
    live = np.empty(_SCAN_BLOCK, np.int64)
    while done < need:
        # Liveness of a block of entries first, branch-free, so that the lookups of the block's
        # rows overlap instead of each waiting behind a mispredicted branch (half are dead).
        head = log_head[w]
        end = min(head + _SCAN_BLOCK, log_tail[w])
        n_live = 0
        for i in range(head, end):
            k = log_ids[w, i]
            live[n_live] = i
            n_live += ((cached[k] & bit) != 0) & (last_use[k, w] == log_t[w, i])
        log_head[w] = end
        for j in range(n_live):
            i = live[j]
            k = log_ids[w, i]
            t = log_t[w, i]
            if t == iteration or (passes_left > 0 and _protected(k, ahead, iteration)):
                passes_left -= 1
                log_head[w] = i + 1
                _log_requeue(w, k, t, log_ids, log_t, log_head, log_tail, cached, last_use)
                break  # the log may have been compacted: rescan from its new head
            _drop(k, w, cached, valid, evicted_ids, evicted_w, first_slot + done)
            done += 1
            if done == need:
                log_head[w] = i + 1
                break
    _take_pending(first_slot, first_slot + need, evicted_ids, evicted_w, pending, evicted_pending)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _log_requeue(w, k, t, log_ids, log_t, log_head, log_tail, cached,
                 last_use):  # pragma: no cover - numba
    log_reserve(w, np.int64(1), log_ids, log_t, log_head, log_tail, cached, last_use)
    log_ids[w, log_tail[w]] = k
    log_t[w, log_tail[w]] = t
    log_tail[w] += 1


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def evict_lfu(w, need, iteration, rows, evictor, touches, first_slot):  # pragma: no cover
    """Evict ``need`` least frequently used rows, never one of this iteration; protected rows
    are set aside like them unless nothing else is left (bundles as :func:`evict_lru`)."""
    cached, valid, pending, last_use, ahead = (rows.cached, rows.valid, rows.pending,
                                               rows.last_use, rows.ahead)
    use_count, heap_keys, heap_ids, heap_t, heap_size = (
        evictor.use_count, evictor.heap_keys, evictor.heap_ids, evictor.heap_t, evictor.heap_size
    )
    evicted_ids, evicted_w, evicted_pending = (touches.evicted_ids, touches.evicted_w,
                                               touches.evicted_pending)
    aside_keys = np.empty(heap_size[w], np.int64)
    aside_ids = np.empty(heap_size[w], np.int32)
    aside_t = np.empty(heap_size[w], np.int32)
    n_aside = 0
    protecting = kept(ahead)  # not without a replacement window
    done = 0
    while done < need:
        if heap_size[w] == 0:  # only pinned or protected rows remain: give up protection
            protecting = False
            for i in range(n_aside):
                if aside_t[i] != iteration:
                    _heap_push(heap_keys, heap_ids, heap_t, heap_size, w, aside_keys[i],
                               aside_ids[i], aside_t[i])
                    aside_t[i] = -1
        k, t, key = _heap_pop(heap_keys, heap_ids, heap_t, heap_size, w)
        if not _lfu_live(w, k, t, key, cached, last_use, use_count):
            continue
        if t == iteration or (protecting and _protected(k, ahead, iteration)):
            aside_keys[n_aside] = key
            aside_ids[n_aside] = k
            aside_t[n_aside] = t
            n_aside += 1
            continue
        _drop(k, w, cached, valid, evicted_ids, evicted_w, first_slot + done)
        done += 1
    for i in range(n_aside):
        if aside_t[i] >= 0:
            _heap_push(heap_keys, heap_ids, heap_t, heap_size, w, aside_keys[i], aside_ids[i],
                       aside_t[i])
    _take_pending(first_slot, first_slot + need, evicted_ids, evicted_w, pending, evicted_pending)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def log_reserve(w, room, log_ids, log_t, log_head, log_tail, cached,
                last_use):  # pragma: no cover - numba
    """Make room for ``room`` more touches at the end of worker w's LRU log (compacting it when
    full, which the log's size keeps amortised O(1) per touch)."""
    if log_tail[w] + room > log_ids.shape[1]:
        _log_compact(w, log_ids, log_t, log_head, log_tail, cached, last_use)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def lfu_touch(w, k, iteration, inserted, policy, permanent_cap, permanent, use_count, touch_seq,
              heap_keys, heap_ids, heap_t, heap_size, cached, last_use):  # pragma: no cover
    """Count a touch and queue the row's new heap entry (none for LFUOpt's permanent rows)."""
    if inserted:
        use_count[k, w] = 1
    elif use_count[k, w] == PERMANENT:
        return
    else:
        use_count[k, w] += 1
    if policy == POLICY_LFUOPT and use_count[k, w] >= LFUOPT_LEVELS:
        use_count[k, w] = LFUOPT_LEVELS
        if permanent[w] < permanent_cap:
            use_count[k, w] = PERMANENT
            permanent[w] += 1
            return
    lfu_queue(w, k, iteration, use_count, touch_seq, heap_keys, heap_ids, heap_t, heap_size,
              cached, last_use)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def lfu_queue(w, k, iteration, use_count, touch_seq, heap_keys, heap_ids, heap_t, heap_size,
              cached, last_use):  # pragma: no cover - numba
    """Queue row k's heap entry at its use count, after every entry queued before it."""
    if heap_size[w] == heap_keys.shape[1]:
        _heap_compact(w, heap_keys, heap_ids, heap_t, heap_size, cached, last_use, use_count)
    key = (np.int64(use_count[k, w]) << 36) | touch_seq[w]
    touch_seq[w] += 1
    _heap_push(heap_keys, heap_ids, heap_t, heap_size, w, key, k, iteration)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def lfu_pop_fewest(w, heap_keys, heap_ids, heap_t, heap_size, cached, last_use,
                   use_count):  # pragma: no cover - numba
    """The cached row with the fewest uses (the earliest queued among them), taken off the
    heap; -1 when no row is there to take (LFUOpt's permanent rows are not)."""
    while heap_size[w] > 0:
        k, t, key = _heap_pop(heap_keys, heap_ids, heap_t, heap_size, w)
        if _lfu_live(w, k, t, key, cached, last_use, use_count):
            return k
    return -1


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def evict_one(k, w, cached, valid, pending, evicted_ids, evicted_w, evicted_pending,
              slot):  # pragma: no cover - numba
    """Evict worker w's copy of row k into eviction record ``slot``, with its unpushed
    updates (bounded staleness)."""
    _drop(k, w, cached, valid, evicted_ids, evicted_w, slot)
    _take_pending(slot, slot + 1, evicted_ids, evicted_w, pending, evicted_pending)
