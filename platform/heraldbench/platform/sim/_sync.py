"""numba kernels of the sync pass: pushes under each sync rule, and the final flush.

Every kernel can also log each row it sends (row, worker, how) into a push log, for executors that
move real rows (the trainer); an empty log array turns logging off.
"""

from __future__ import annotations

import numba
import numpy as np

from heraldbench.platform.contract import Send
from heraldbench.platform.sim._eviction import bit_of, popcount, several_bits
from heraldbench.platform.sim._kernels import TOUCH_HIT, valid_after_write

# How a dirty copy left its worker: the contract's send kinds as plain ints for numba.
SENT_EVICT, SENT_UPDATE, SENT_DIRECT = int(Send.EVICT), int(Send.UPDATE), int(Send.DIRECT)
SENT_RELEASE = int(Send.RELEASE)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _log_sent(k, w, how, log_k, log_w, log_how, log_n):  # pragma: no cover - numba
    """Append (row, worker, how) to a push log. Callers test once per kernel whether they log
    (``log_k`` is non-empty), not per row: see write_and_sync."""
    i = log_n[0]
    log_k[i] = k
    log_w[i] = w
    log_how[i] = how
    log_n[0] = i + 1


@numba.njit(cache=True, nogil=True, inline="always")
def _log_holders(k, holders, workers, how, log_k, log_w, log_how, log_n):  # pragma: no cover
    for v in range(workers):
        if np.uint64(holders) & bit_of(v):
            _log_sent(k, np.int64(v), np.int64(how), log_k, log_w, log_how, log_n)


@numba.njit(cache=True, nogil=True)
def sync_iteration(
    iteration, settings, pulled, evicted, written, ahead_written, rows, counts, log
):  # pragma: no cover - numba
    """Push accounting of one iteration under on-demand sync looking more than one iteration
    ahead, run once the reads of the look-ahead window are known (the other rules but HET's
    are taken with the writes: :func:`write_and_sync`).

    counts[0] += evict pushes, counts[1] += update pushes, counts[2] += consistency violations
    (a pull while another copy of the row is dirty, or while a partial copy exists).
    Bundles (``_bundles``): ``settings`` SyncSettings; ``pulled`` the iteration's TouchList,
    ``evicted`` its EvictionList, ``written`` its WriteList and ``ahead_written`` the window's
    newest iteration's; ``rows`` SyncRows; ``log`` the iteration's PushLog.
    """
    workers, direct, strict, check = settings
    pulled_ids, pulled_w, pulled_kind, n_pulled = pulled
    evicted_ids, evicted_w, _, n_evicted = evicted
    write_ids, write_masks, n_written = written
    ahead_ids, _, n_ahead = ahead_written
    _, dirty, partial, last_use, _, _ = rows
    log_k, log_w, log_how, log_n = log
    if check:
        for i in range(n_pulled):
            if pulled_kind[i] != TOUCH_HIT:
                counts[2] += _pull_violates(pulled_ids[i], pulled_w[i], dirty, partial)
    push_evicted(evicted_ids, evicted_w, n_evicted, dirty, False, direct, dirty, partial, counts,
                 log_k, log_w, log_how, log_n)
    for i in range(n_written):
        k, mask = write_ids[i], write_masks[i]
        dirty[k] = dirty[k] | mask
        partial[k] = strict and several_bits(mask)
    # A row dirtied now may be read anywhere in the window; a row dirty for longer was already
    # checked against earlier windows, so only the window's newest iteration can add a reader.
    _push_for_window_readers(write_ids, n_written, iteration, workers, direct, last_use, dirty,
                             partial, counts, log_k, log_w, log_how, log_n)
    _push_for_window_readers(ahead_ids, n_ahead, iteration, workers, direct, last_use, dirty,
                             partial, counts, log_k, log_w, log_how, log_n)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _push_for_window_readers(ids, n, iteration, workers, direct, last_use, dirty, partial, counts,
                             log_k, log_w, log_how, log_n):  # pragma: no cover - numba
    """Rows ``ids[:n]``: push the dirty copies that the workers reading them after ``iteration``
    (up to where the residency pass has got) need."""
    logging = log_k.shape[0] > 0
    for i in range(n):
        k = ids[i]
        readers = np.uint64(0)
        for w in range(workers):
            readers |= bit_of(w) if last_use[k, w] > iteration else np.uint64(0)
        holders, part = np.uint64(dirty[k]), partial[k]
        pushing, pushes, how = _pushing_for_readers(holders, part, readers, direct)
        counts[1] += pushes
        if logging:
            _log_holders(k, pushing, workers, how, log_k, log_w, log_how, log_n)
        dirty[k] = holders & ~pushing
        partial[k] = part and pushing == 0


@numba.njit(cache=True, nogil=True)
def write_and_sync(
    settings, on_demand, after_first, touched, evicted, rows, write_ids, write_masks,
    counts_before, counts, log_before, log,
):  # pragma: no cover - numba
    """The writes of iteration t with the syncs they complete, in one pass over its rows.

    For write-through, and on-demand sync looking one iteration ahead (whose readers of t are
    exactly its writers): what :func:`write_batch` of t and then the push accounting of t - 1
    and of t (write-through: of t) would do, but with the look-ahead pushes of t - 1 and the new
    dirty copies of t taken row by row while the rows' records are in the CPU's cache. Per row
    the order is that of separate passes, and no row's pushes depend on another's. t's evictions
    are accounted first, as they happened, before its writes: an evicted copy that t - 1's
    look-ahead pushes (for t's readers) is pushed by it, not written back (an evicted copy may
    be one its worker writes again in t, after eviction on insert). ``after_first``: t > 0.
    Bundles (``_bundles``): ``settings`` SyncSettings, ``touched`` t's TouchList, ``evicted``
    its EvictionList, ``rows`` SyncRows, whose ``claims`` serve as the check's per-row scratch
    of pullers (zero on entry and return). counts_before[1] += update pushes of t - 1;
    counts[0] += evict pushes, counts[1] += write-through pushes, counts[2] += consistency
    violations of t. log_before and log are the PushLogs of t - 1 and t, with empty arrays for
    none. t's rows and their writers go to ``write_ids`` and ``write_masks``.
    Returns the number of distinct rows written."""
    # Per row, the loop below touches arrays only directly or under a loop-invariant test: an
    # array handed to an inlined helper, or taken from a tuple, costs atomic reference counts;
    # so every bundle is unpacked here, once.
    workers, direct, strict, check = settings
    touched_ids, touched_w, touched_kind, n_touched = touched
    evicted_ids, evicted_w, _, n_evicted = evicted
    valid, dirty, partial, _, writers, pullers = rows
    before_k, before_w, before_how, before_n = log_before
    log_k, log_w, log_how, log_n = log
    logging_before, logging = before_k.shape[0] > 0, log_k.shape[0] > 0
    one = writers.dtype.type(1)
    for i in range(n_touched):
        k = touched_ids[i]
        bit = one << touched_w[i]
        writers[k] |= bit
        if check and touched_kind[i] != TOUCH_HIT:
            pullers[k] |= bit
    push_evicted(evicted_ids, evicted_w, n_evicted, writers, on_demand and after_first, direct,
                 dirty, partial, counts, log_k, log_w, log_how, log_n)
    n_written = 0
    for i in range(n_touched):
        k = touched_ids[i]
        mask = writers[k]
        writers[k] = 0
        if mask == 0:  # not the row's first touch: written out already
            continue
        valid[k] = valid_after_write(mask, not strict)
        write_ids[n_written] = k
        write_masks[n_written] = mask
        n_written += 1
        if on_demand and after_first:  # t's readers are its writers
            holders = np.uint64(dirty[k])
            pushing, pushes, how = _pushing_for_readers(holders, partial[k], np.uint64(mask),
                                                        direct)
            counts_before[1] += pushes
            if logging_before:
                _log_holders(k, pushing, workers, how, before_k, before_w, before_how, before_n)
            dirty[k] = holders & ~pushing  # (partial is set anew below)
        if check:
            counts[2] += _violations(k, pullers[k], workers, dirty, partial)
            pullers[k] = 0
        # the writers' copies are now dirty; under strict consistency co-writers' are partial
        dirty[k] = dirty[k] | mask
        partial[k] = strict and several_bits(mask)
    if not on_demand:
        for i in range(n_written):
            k = write_ids[i]
            counts[1] += popcount(dirty[k])
            if logging:
                _log_holders(k, dirty[k], workers, SENT_UPDATE, log_k, log_w, log_how, log_n)
            dirty[k] = 0
            partial[k] = False
    return n_written


@numba.njit(cache=True, nogil=True, inline="always")
def _violations(k, pullers, workers, dirty, partial):  # pragma: no cover - numba
    """Pulls of row k by the workers in ``pullers`` that break consistency."""
    found = 0
    for w in range(workers):
        if np.uint64(pullers) & bit_of(w):
            found += _pull_violates(k, w, dirty, partial)
    return found


@numba.njit(cache=True, nogil=True, inline="always")
def _pull_violates(k, w, dirty, partial):  # pragma: no cover - numba
    """Worker w pulls row k while another copy is dirty, or while a partial copy exists."""
    others = np.uint64(dirty[k]) & ~bit_of(w)
    return others != 0 or (partial[k] and dirty[k] != 0)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def push_evicted(evicted_ids, evicted_w, n_evicted, readers, anticipating, direct, dirty, partial,
                 counts, log_k, log_w, log_how, log_n):  # pragma: no cover - numba
    """Evicted copies that are dirty are written back (evict pushes, counts[0]), except, when
    ``anticipating``, those that on-demand pushes still to come will send: ``readers`` (per
    row, a worker mask) are then the workers reading each row next, for whom the previous
    iteration's dirty copies are yet to be pushed (see write_and_sync)."""
    logging = log_k.shape[0] > 0
    for i in range(n_evicted):
        k, w = evicted_ids[i], evicted_w[i]
        bit = bit_of(w)
        holders = np.uint64(dirty[k])
        if anticipating and readers[k] != 0:
            holders &= ~_pushing_for_readers(holders, partial[k], np.uint64(readers[k]), direct)[0]
        pushed = (holders & bit) != 0
        counts[0] += pushed
        if logging and pushed:
            _log_sent(k, np.int64(w), np.int64(SENT_EVICT), log_k, log_w, log_how, log_n)
        dirty[k] = np.uint64(dirty[k]) & ~(bit if pushed else np.uint64(0))
        partial[k] = partial[k] and dirty[k] != 0


@numba.njit(cache=True, nogil=True, inline="always")
def _pushing_for_readers(holders, part, readers, direct):  # pragma: no cover - numba
    """The dirty copies of a row (``holders``) that its next ``readers`` need sent, the pushes
    that costs, and how they are logged. Partial copies (``part``) all go, to the PS, which sums
    them. Of whole copies, a holder sends unless the only reader is itself (with two or more
    readers every holder does); with ``direct`` the row's only dirty copy goes to its readers,
    which count it as their pull, and the dirty state moves with it: no push. Several whole
    dirty copies (optimistic co-writers) each lack the others' updates: they go to the PS,
    which sums them. Scalars only and no branches: see write_and_sync."""
    whole = holders if several_bits(readers) else holders & ~readers
    pushing = (holders if part else whole) if readers != 0 else holders ^ holders
    through_ps = part or not direct or several_bits(holders)
    pushes = popcount(pushing) if through_ps else 0
    return pushing, pushes, SENT_UPDATE if through_ps else SENT_DIRECT


@numba.njit(cache=True, nogil=True)
def count_dirty(dirty):  # pragma: no cover - numba
    total = 0
    for k in range(dirty.shape[0]):
        if dirty[k]:
            total += popcount(dirty[k])
    return total


@numba.njit(cache=True, nogil=True)
def bounded_staleness_sync(
    touched, pushes, evicted, cached, lag, lag_max, counts, log
):  # pragma: no cover - numba
    """HET's pushes of one iteration (docs/semantics.md, "Bounded staleness"), once every worker has read.

    Evicted copies with pending updates are pushed, and so are the copies the reads found
    holding more than the bound (``push_at``, from the read kernel: ``_kernels.read_kernel``);
    their clock ticks land now, after every worker's reads. counts[0] += evict pushes, counts[1] += update pushes; a
    pushed copy its worker does not keep (``ReadRules.lfu_on_insert``) is released: an evict
    push.

    Clocks are kept as each copy's lag behind the PS (PS clock − the clock the copy last synced
    at): a push of ``held`` ticks ages every other cached copy of the row by ``held``; the
    pusher's own copy already holds those updates, so its lag is unchanged.
    Bundles (``_bundles``): ``touched`` the iteration's TouchList, ``pushes`` its HeldPushes,
    ``evicted`` its EvictionList, ``log`` its PushLog.
    """
    touched_ids, touched_w, _, _ = touched
    push_at, push_held, n_pushed = pushes
    evicted_ids, evicted_w, evicted_pending, n_evicted = evicted
    log_k, log_w, log_how, log_n = log
    logging = log_k.shape[0] > 0  # tested once: see write_and_sync
    for i in range(n_evicted):
        held = evicted_pending[i]
        if held > 0:
            counts[0] += 1
            _age_copies(evicted_ids[i], np.int8(-1), held, cached, lag, lag_max)
            if logging:
                _log_sent(evicted_ids[i], np.int64(evicted_w[i]), np.int64(SENT_EVICT), log_k,
                          log_w, log_how, log_n)  # fmt: skip
    for j in range(n_pushed):
        i = push_at[j]
        k = touched_ids[i]
        kept = (np.uint64(cached[k]) & bit_of(touched_w[i])) != 0
        counts[1 if kept else 0] += 1
        if logging:
            _log_sent(k, np.int64(touched_w[i]), np.int64(SENT_UPDATE if kept else SENT_RELEASE),
                      log_k, log_w, log_how, log_n)  # fmt: skip
        _age_copies(k, touched_w[i], push_held[j], cached, lag, lag_max)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _age_copies(k, pusher, held, cached, lag, lag_max):  # pragma: no cover - numba
    """The PS clock of row k moved ``held`` ticks ahead: every cached copy but the pusher's
    falls that far behind, saturating at ``lag_max``, the clocks' largest value (a lead beyond
    it is stale under any bound their type allows: see _state.clock_dtype)."""
    holders = np.uint64(cached[k])
    for v in range(lag.shape[1]):
        if holders & bit_of(v) and v != pusher:
            lag[k, v] = min(np.int64(lag[k, v]) + held, lag_max)


@numba.njit(cache=True, nogil=True)
def count_pending(pending):  # pragma: no cover - numba
    """Copies still holding unpushed updates (HET's flush at the end)."""
    total = 0
    for k in range(pending.shape[0]):
        for w in range(pending.shape[1]):
            if pending[k, w] > 0:
                total += 1
    return total


@numba.njit(cache=True, nogil=True)
def invalidate(rows, valid):  # pragma: no cover - numba
    """Mark every cached copy of ``rows`` outdated (their master moved elsewhere)."""
    for i in range(rows.shape[0]):
        valid[rows[i]] = 0
