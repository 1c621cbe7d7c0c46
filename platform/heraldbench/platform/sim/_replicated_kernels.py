"""numba kernels of the logically replicated cache (BagPipe); the rules are in ``_replicated``.

State lives in arrays indexed by global row id:

- ``latest[k]``: the last batch known to use k (the look-ahead window's newest batch is the limit
  of what is known); it doubles as the "already seen in this batch" marker while a batch is
  enqueued, and ``pos[k]`` is k's position in the distinct-row list of batch ``latest[k]``.
- ``state[k]``: bit ``IN`` (k is a member of the replicated cache), bit ``DIRTY`` (updated since
  it was loaded).

A batch in the window is kept as its distinct rows (``uniq``), the number of workers reading each
(``nread``) and flags (``SINGLE``: one occurrence in the whole global batch; ``NEXT``: the next
batch uses it too).
"""

from __future__ import annotations

import numba
import numpy as np

from heraldbench.platform.sim._eviction import bit_of, popcount

IN, DIRTY = np.uint8(1), np.uint8(2)
SINGLE, NEXT = np.uint8(1), np.uint8(2)

#: Per-iteration counts returned by ``run_batch``, by index.
LOOKUPS, DEMAND, FILL, TRANSIENT, SYNC_NOW, SYNC_LATER, NO_SYNC = range(7)
RUN_COUNTS = 7
#: Gradient sync class of each distinct row, as ``run_batch`` writes it into ``classes``.
CLASS_NOW, CLASS_LATER, CLASS_NO_SYNC = np.uint8(0), np.uint8(1), np.uint8(2)


@numba.njit(cache=True, nogil=True)
def enqueue_batch(ids, counted, padded, assign, j, latest, pos, uniq, nread, flags, prev_flags,
                  masks):  # pragma: no cover - numba
    """Add batch j to the window; returns (distinct rows, per-worker distinct lookups).
    With ``padded``, ``counted`` is ``ids`` with a ragged table's pads marked -1: a pad is no
    second occurrence of its row (a pad repeats an id read before it, so a row's first
    occurrence in the batch is never a pad).

    Marks rows of batch j-1 that j uses again as ``NEXT`` (their gradient is sync-now).
    """
    n = 0
    samples, fields = ids.shape
    for i in range(samples):
        w = assign[i]
        bit = bit_of(w)
        for f in range(fields):
            k = ids[i, f]
            if latest[k] != j:
                if j > 0 and latest[k] == j - 1:
                    prev_flags[pos[k]] |= NEXT
                latest[k] = j
                pos[k] = n
                uniq[n] = k
                flags[n] = SINGLE
                masks[n] = 0
                s = n
                n += 1
            else:
                s = pos[k]
                if not padded or counted[i, f] >= 0:
                    flags[s] &= ~SINGLE
            masks[s] |= bit
    lookups = 0
    for s in range(n):
        c = popcount(masks[s])
        nread[s] = c
        lookups += c
    return n, lookups


@numba.njit(cache=True, nogil=True)
def evict_pending(state, pending, n_pending, occupancy):  # pragma: no cover - numba
    """Evict the rows whose lease expired; returns write-backs (dirty rows evicted)."""
    written = 0
    for i in range(n_pending):
        k = pending[i]
        if state[k] & IN:
            if state[k] & DIRTY:
                written += 1
            state[k] = 0
            occupancy[0] -= 1
    return written


@numba.njit(cache=True, nogil=True)
def prefetch(first, stop, uniq, counts, state, occupancy, capacity):  # pragma: no cover - numba
    """Load whole batches ``first, first+1, … < stop`` (ring slots of ``uniq``) while they fit.

    Returns (first batch not loaded, rows loaded). A batch that would overflow ``capacity`` stops
    the sweep; it is tried again at the next cleanup point.
    """
    slots = uniq.shape[0]
    loaded = 0
    j = first
    while j < stop:
        s = j % slots
        need = 0
        for i in range(counts[s]):
            if not state[uniq[s, i]] & IN:
                need += 1
        if occupancy[0] + need > capacity:
            break
        for i in range(counts[s]):
            k = uniq[s, i]
            if not state[k] & IN:
                state[k] = IN
        occupancy[0] += need
        loaded += need
        j += 1
    return j, loaded


@numba.njit(cache=True, nogil=True)
def run_batch(b, workers, capacity, uniq, nread, flags, n, latest, state, occupancy, missing,
              classes, pending, n_pending, out):  # pragma: no cover - numba
    """Reads, on-demand fetches, sync classes and lease updates of batch b; counts into ``out``
    and each distinct row's sync class into ``classes``.

    Returns the new length of the pending-eviction list.
    """
    for i in range(n):
        missing[i] = not state[uniq[i]] & IN
    # On-demand admission, sync-now rows first, then other rows reused in the window; rows
    # without a known reuse are never admitted (caching them would cost W-1 extra pulls).
    room = capacity - occupancy[0]
    for want_next in (True, False):
        for i in range(n):
            k = uniq[i]
            if room > 0 and missing[i] and not state[k] & IN and latest[k] > b:
                if want_next == bool(flags[i] & NEXT):
                    state[k] = IN
                    room -= 1
                    occupancy[0] += 1
    for i in range(n):
        k = uniq[i]
        r = nread[i]
        out[LOOKUPS] += r
        if missing[i]:
            out[DEMAND] += r
            if state[k] & IN:
                out[FILL] += workers - r
            else:
                out[TRANSIENT] += 1
        if flags[i] & NEXT:
            out[SYNC_NOW] += 1
            classes[i] = CLASS_NOW
        elif flags[i] & SINGLE and latest[k] == b:
            out[NO_SYNC] += 1
            classes[i] = CLASS_NO_SYNC
        else:
            out[SYNC_LATER] += 1
            classes[i] = CLASS_LATER
        if state[k] & IN:
            state[k] |= DIRTY
            if latest[k] == b:  # lease ends at b: evicted at the next cleanup point
                pending[n_pending] = k
                n_pending += 1
    return n_pending


@numba.njit(cache=True, nogil=True)
def count_dirty(state):  # pragma: no cover - numba
    dirty = 0
    for k in range(state.shape[0]):
        if state[k] & DIRTY:
            dirty += 1
    return dirty
