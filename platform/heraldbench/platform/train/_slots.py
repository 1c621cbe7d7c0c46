"""numba kernels of the emulated executor's slot bookkeeping: which slot holds each copy, which
are free, and the update counts of rows, copies and the PS.

Each kernel is one pass over an iteration's records, where the numpy it replaces took several
(fancy-indexed gathers of ``slot_of[w, k]``, masks, a sort per worker). The rows themselves never
pass through here, so the same bookkeeping serves caches in host memory and on a GPU: on a GPU
it is the host's whole share of a cache move, which is what keeps the GPU waiting or not.

Checks come before changes: a kernel that finds a broken invariant returns where (the executor
raises, naming it) before it has changed any state the executor keeps (``read_plan``'s positions
are scratch for the iteration's gather).
"""

from __future__ import annotations

import numba

__all__ = ["allocate", "count_updates", "lookup", "pull_plan", "read_plan", "release", "settle"]

#: A kernel's "all is well"; any other value names the record or worker at fault.
OK = -1


@numba.njit(cache=True, nogil=True)
def lookup(ids, workers, slot_of, out):  # pragma: no cover - numba
    """``out[i] = slot_of[workers[i], ids[i]]``; returns the first record with no copy, or OK."""
    bad = OK
    for i in range(ids.shape[0]):
        out[i] = slot_of[workers[i], ids[i]]
        if out[i] < 0 and bad == OK:
            bad = i
    return bad


@numba.njit(cache=True, nogil=True)
def settle(slots, rows, ps_version, pending):  # pragma: no cover - numba
    """A write-back's counts: the PS now holds each copy's pending updates, the copy none."""
    for i in range(slots.shape[0]):
        ps_version[rows[i]] += pending[slots[i]]
        pending[slots[i]] = 0


@numba.njit(cache=True, nogil=True)
def allocate(ids, workers, kinds, miss, free, free_top, slot_of, slot_row, pending,
             taken):  # pragma: no cover - numba  # fmt: skip
    """Give each MISS record a free slot of its worker; a worker's misses take its free stack's
    top slots in record order. Returns (0, OK), or (1, w): w's cache is full, or (2, w): w would
    reuse a slot with pending updates; the first such worker in worker order."""
    taken[:] = 0
    for i in range(ids.shape[0]):
        if kinds[i] == miss:
            taken[workers[i]] += 1
    for w in range(taken.shape[0]):
        top = free_top[w]
        if taken[w] > top:
            return 1, w
        for j in range(top - taken[w], top):
            if pending[free[w, j]] != 0:
                return 2, w
    for w in range(taken.shape[0]):
        free_top[w] -= taken[w]
        taken[w] = free_top[w]  # the cursor: next slot handed out
    for i in range(ids.shape[0]):
        if kinds[i] == miss:
            w = workers[i]
            slot = free[w, taken[w]]
            taken[w] += 1
            slot_of[w, ids[i]] = slot
            slot_row[slot] = ids[i]
    return 0, OK


@numba.njit(cache=True, nogil=True)
def release(ids, workers, slot_of, pending, free, free_top):  # pragma: no cover - numba
    """Evicted copies leave their slots, pushed on their worker's free stack in record order.
    Returns (0, OK), or (1, i): record i's worker holds no copy, or (2, i): its copy has
    updates never written back; the first such record."""
    for i in range(ids.shape[0]):
        slot = slot_of[workers[i], ids[i]]
        if slot < 0:
            return 1, i
        if pending[slot] != 0:
            return 2, i
    for i in range(ids.shape[0]):
        w = workers[i]
        free[w, free_top[w]] = slot_of[w, ids[i]]
        free_top[w] += 1
        slot_of[w, ids[i]] = -1
    return 0, OK


@numba.njit(cache=True, nogil=True)
def pull_plan(touched, ids, pulled, ps_version, pending, copy_version, slots,
              rows):  # pragma: no cover - numba  # fmt: skip
    """The ``pulled`` records' slots (of ``touched``, every record's) and rows, into ``slots``
    and ``rows``; each copy's count becomes the PS's plus its pending updates (HET keeps them
    across a refresh). Returns (pulls, any pending update)."""
    n, keep = 0, False
    for i in range(ids.shape[0]):
        if pulled[i]:
            slot = touched[i]
            slots[n], rows[n] = slot, ids[i]
            copy_version[slot] = ps_version[ids[i]] + pending[slot]
            keep = keep or pending[slot] != 0
            n += 1
    return n, keep


@numba.njit(cache=True, nogil=True)
def read_plan(slots, ids, latest, copy_version, pos_of_slot):  # pragma: no cover - numba
    """Each read slot's position among them, and the reads of copies missing updates applied
    elsewhere. Returns (stale reads, the largest lag, the first stale record or OK)."""
    stale, most, first = 0, 0, OK
    for i in range(slots.shape[0]):
        pos_of_slot[slots[i]] = i
        lag = latest[ids[i]] - copy_version[slots[i]]
        if lag != 0:
            stale += 1
            most = max(most, lag)
            first = i if first == OK else first
    return stale, most, first


@numba.njit(cache=True, nogil=True)
def count_updates(slots, rows, copy_version, pending, latest):  # pragma: no cover - numba
    """One SGD step on each copy read: its count, its pending count and its row's count."""
    for i in range(slots.shape[0]):
        copy_version[slots[i]] += 1
        pending[slots[i]] += 1
        latest[rows[i]] += 1
