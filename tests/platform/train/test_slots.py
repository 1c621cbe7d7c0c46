"""The executor's slot bookkeeping kernels against the rules they carry out, written in numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from heraldbench.platform.train import _slots

WORKERS, ROWS, CAPACITY = 3, 40, 12


def _state(seed: int):
    """A cache state: each worker holds some rows, its free stack holds the other slots."""
    rng = np.random.default_rng(seed)
    slot_of = np.full((WORKERS, ROWS), -1, np.int32)
    free = np.zeros((WORKERS, CAPACITY), np.int64)
    free_top = np.zeros(WORKERS, np.int64)
    for w in range(WORKERS):
        slots = np.arange(w * CAPACITY, (w + 1) * CAPACITY)
        held = int(rng.integers(0, CAPACITY // 2))
        slot_of[w, rng.choice(ROWS, held, replace=False)] = slots[:held]
        free[w, : CAPACITY - held] = rng.permutation(slots[held:])
        free_top[w] = CAPACITY - held
    return slot_of, free, free_top


def _misses(seed: int, slot_of: np.ndarray, count: int):
    """Distinct (row, worker) records of rows the worker does not hold, in a random order."""
    rng = np.random.default_rng(seed + 1)
    w, k = np.nonzero(slot_of < 0)
    pick = rng.permutation(w.size)[:count]
    return k[pick].astype(np.int32), w[pick].astype(np.int8)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), count=st.integers(0, 15))
def test_a_workers_misses_take_its_free_stacks_top_slots_in_record_order(seed, count) -> None:
    slot_of, free, free_top = _state(seed)
    ids, workers = _misses(seed, slot_of, count)
    kinds = np.ones(ids.size, np.int8)  # every record a miss
    expected, expected_top, full = slot_of.copy(), free_top.copy(), None
    before = free_top.copy()
    for w in range(WORKERS):  # the rule: w's n misses take free[w, top-n:top], in order
        mine = np.flatnonzero(workers == w)
        if mine.size > expected_top[w]:
            full = w if full is None else full
            continue
        top = expected_top[w]
        expected[w, ids[mine]] = free[w, top - mine.size : top]
        expected_top[w] = top - mine.size
    slot_row, pending = np.zeros(WORKERS * CAPACITY, np.int64), np.zeros(WORKERS * CAPACITY, np.int64)
    fault, worker = _slots.allocate(ids, workers, kinds, 1, free, free_top, slot_of, slot_row,
                                    pending, np.zeros(WORKERS, np.int64))  # fmt: skip
    if full is not None:  # refused before anything changed
        assert (fault, worker) == (1, full)
        assert np.array_equal(slot_of, _state(seed)[0]) and np.array_equal(free_top, before)
        return
    assert (fault, worker) == (0, _slots.OK)
    assert np.array_equal(slot_of, expected) and np.array_equal(free_top, expected_top)
    assert np.array_equal(slot_row[slot_of[workers, ids]], ids)


def test_a_slot_with_pending_updates_is_never_handed_out() -> None:
    """Worker 0's misses are fine, worker 1's next free slot has pending updates: refused,
    naming worker 1, before worker 0's allocation changed anything."""
    slot_of, free, free_top = _state(3)
    ids = np.array([np.flatnonzero(slot_of[0] < 0)[0], np.flatnonzero(slot_of[1] < 0)[0]], np.int32)
    workers = np.array([0, 1], np.int8)
    pending = np.zeros(WORKERS * CAPACITY, np.int64)
    pending[free[1, free_top[1] - 1]] = 1
    before = (slot_of.copy(), free_top.copy())
    fault, worker = _slots.allocate(ids, workers, np.ones(2, np.int8), 1, free, free_top, slot_of,
                                    np.zeros_like(pending), pending,
                                    np.zeros(WORKERS, np.int64))  # fmt: skip
    assert (fault, worker) == (2, 1)
    assert np.array_equal(slot_of, before[0]) and np.array_equal(free_top, before[1])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_evicted_copies_go_back_on_their_workers_free_stack_in_record_order(seed) -> None:
    slot_of, free, free_top = _state(seed)
    w, k = np.nonzero(slot_of >= 0)
    order = np.random.default_rng(seed).permutation(w.size)
    ids, workers = k[order].astype(np.int32), w[order].astype(np.int8)
    slots = slot_of[workers, ids].astype(np.int64)
    expected_free, expected_top = free.copy(), free_top.copy()
    for i in range(ids.size):
        expected_free[workers[i], expected_top[workers[i]]] = slots[i]
        expected_top[workers[i]] += 1
    pending = np.zeros(WORKERS * CAPACITY, np.int64)
    assert _slots.release(ids, workers, slot_of, pending, free, free_top) == (0, _slots.OK)
    assert (slot_of < 0).all()
    assert np.array_equal(free, expected_free) and np.array_equal(free_top, expected_top)


def test_an_eviction_is_refused_before_anything_changes() -> None:
    slot_of, free, free_top = _state(5)
    w, k = np.nonzero(slot_of >= 0)
    pending = np.zeros(WORKERS * CAPACITY, np.int64)
    pending[slot_of[w[-1], k[-1]]] = 2  # the last record's copy was never written back
    before = (slot_of.copy(), free.copy(), free_top.copy())
    fault, at = _slots.release(k.astype(np.int32), w.astype(np.int8), slot_of, pending, free,
                               free_top)  # fmt: skip
    assert (fault, at) == (2, w.size - 1)
    assert all(np.array_equal(a, b) for a, b in zip(before, (slot_of, free, free_top),
                                                    strict=True))  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_reads_and_pulls_find_the_copies_and_count_what_they_miss(seed) -> None:
    """The slot of each record, the pulls among them and the reads of outdated copies."""
    slot_of, _, _ = _state(seed)
    rng = np.random.default_rng(seed)
    w, k = np.nonzero(slot_of >= 0)
    ids, workers = k.astype(np.int32), w.astype(np.int8)
    slots = slot_of[workers, ids].astype(np.int64)
    latest = rng.integers(0, 3, ROWS)
    copy_version = np.zeros(WORKERS * CAPACITY, np.int64)
    copy_version[slots] = latest[ids] - rng.integers(0, 2, ids.size)
    lag = latest[ids] - copy_version[slots]
    found = np.empty(ids.size, np.int64)
    assert _slots.lookup(ids, workers, slot_of, found) == _slots.OK
    assert np.array_equal(found, slots)
    positions = np.zeros(WORKERS * CAPACITY, np.int64)
    stale, most, first = _slots.read_plan(slots, ids, latest, copy_version, positions)
    assert np.array_equal(positions[slots], np.arange(ids.size))
    assert stale == np.count_nonzero(lag) and most == max(0, int(lag.max(initial=0)))
    assert first == (int(np.flatnonzero(lag)[0]) if stale else _slots.OK)

    pulled = rng.random(ids.size) < 0.5
    ps_version = rng.integers(0, 5, ROWS)
    pending = rng.integers(0, 2, WORKERS * CAPACITY)
    out_slots, out_rows = np.empty(ids.size, np.int64), np.empty(ids.size, np.int64)
    count, keep = _slots.pull_plan(slots, ids, pulled, ps_version, pending, copy_version,
                                   out_slots, out_rows)  # fmt: skip
    assert count == pulled.sum()
    assert np.array_equal(out_slots[:count], slots[pulled])
    assert np.array_equal(out_rows[:count], ids[pulled])
    assert np.array_equal(copy_version[slots[pulled]],
                          ps_version[ids[pulled]] + pending[slots[pulled]])  # fmt: skip
    assert keep == bool(pending[slots[pulled]].any())


def test_a_lookup_names_the_first_record_whose_worker_holds_no_copy() -> None:
    slot_of, _, _ = _state(7)
    w, k = np.nonzero(slot_of >= 0)
    absent_w, absent_k = np.nonzero(slot_of < 0)
    ids = np.array([k[0], absent_k[0], absent_k[1]], np.int32)
    workers = np.array([w[0], absent_w[0], absent_w[1]], np.int8)
    assert _slots.lookup(ids, workers, slot_of, np.empty(3, np.int64)) == 1
