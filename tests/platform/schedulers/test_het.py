"""HET: bounded staleness on reads and writes, clocks per occurrence or per iteration, LFUOpt."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.data import InMemoryTrace
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.schedulers import create
from heraldbench.platform.sim import simulate


def _skewed(samples: int = 3000, seed: int = 0) -> InMemoryTrace:
    rng = np.random.default_rng(seed)
    sizes = [20, 150, 900]
    local = np.stack([np.minimum(rng.zipf(1.3, samples) - 1, s - 1) for s in sizes], axis=1)
    return InMemoryTrace.from_local_ids(local, sizes)


@pytest.mark.parametrize("policy", ["lru", "lfu", "lfuopt"])
def test_bound_zero_is_exactly_naive_write_through(policy: str) -> None:
    trace = _skewed()
    naive = simulate(trace, create("naive", workers=4, batch_size=8, seed=3), cache_rows=60,
                     policy=policy).counts
    het = simulate(trace, create("het", workers=4, batch_size=8, seed=3, bound=0), cache_rows=60,
                   policy=policy, check_invariants=True).counts
    assert het.as_dict() | {"metadata": 0} == naive.as_dict()
    assert het.metadata == het.lookups  # one version check per lookup, counted apart


def _single_worker(rows: list[int], **knobs) -> dict:
    trace = InMemoryTrace.from_local_ids(np.array(rows)[:, None], [10])
    sched = create("het", workers=1, batch_size=1, **knobs)
    return simulate(trace, sched, cache_rows=4).counts.as_dict()


def test_updates_are_held_until_more_than_bound_accumulate() -> None:
    # One worker reads row 0 four times. bound=2: pending 1, 2, 3 -> push at the third update
    # (3 > 2), then pending 1 left at the end -> flush. Reads: miss, then hits (its own copy is
    # never behind the PS clock by more than the bound: it pushed them itself).
    counts = _single_worker([0, 0, 0, 0], bound=2)
    assert (counts["miss_pull"], counts["hits"], counts["update_pull"]) == (1, 3, 0)
    assert (counts["update_push"], counts["flush_push"], counts["evict_push"]) == (1, 1, 0)


def test_stale_reads_within_the_bound_are_hits_and_beyond_it_are_pulls() -> None:
    # Two workers, batch of 2 samples each iteration: both read row 0 every iteration (bound 1,
    # per-iteration clock). It. 0: two misses; each pending 1 (not > 1). It. 1: the PS clock
    # has not moved, two hits; pending 2 > 1 -> both push (clock 4, each copy's version 2).
    # It. 2: clock 4 - version 2 = 2 > 1 -> two update pulls; pending 1. End: flush 2.
    trace = InMemoryTrace.from_local_ids(np.zeros((6, 1), np.int64), [3])
    sched = create("het", workers=2, batch_size=1, bound=1, clock_unit="iteration")
    c = simulate(trace, sched, cache_rows=2).counts
    assert (c.miss_pull, c.hits, c.update_pull) == (2, 2, 2)
    assert (c.update_push, c.flush_push) == (2, 2)


def test_occurrence_clock_ticks_per_id_occurrence() -> None:
    # One worker, two samples per iteration, both reading row 0: 2 occurrences per iteration,
    # 3 iterations, bound 2.
    trace = InMemoryTrace.from_local_ids(np.zeros((6, 1), np.int64), [1])
    occ = simulate(trace, create("het", workers=1, batch_size=2, bound=2), cache_rows=2).counts
    ite = simulate(trace, create("het", workers=1, batch_size=2, bound=2,
                                 clock_unit="iteration"), cache_rows=2).counts
    # Per occurrence: pending 2 (kept), 4 > 2 (pushed), 2 (left: flush).
    assert (occ.update_push, occ.flush_push) == (1, 1)
    # Per iteration: pending 1, 2, 3 > 2 (pushed at the end of the third): nothing left.
    assert (ite.update_push, ite.flush_push) == (1, 0)


def test_larger_bound_moves_less_and_reads_more_stale() -> None:
    trace = _skewed(seed=5)
    traffic = []
    for bound in (0, 1, 10, 100):
        c = simulate(trace, create("het", workers=4, batch_size=8, seed=1, bound=bound),
                     cache_rows=60).counts
        traffic.append(c.pull + c.push)
    assert traffic == sorted(traffic, reverse=True) and traffic[-1] < traffic[0] / 2


def test_lfuopt_keeps_frequent_rows_permanently() -> None:
    rng = np.random.default_rng(5)
    samples, sizes = 20000, [30, 500, 3000]
    local = np.stack([np.minimum(rng.zipf(1.2, samples) - 1, s - 1) for s in sizes], axis=1)
    local[samples // 2:] = (local[samples // 2:] + [7, 111, 1234]) % sizes  # popularity shifts
    trace = InMemoryTrace.from_local_ids(local, sizes)
    misses = {
        policy: simulate(trace, create("het", workers=2, batch_size=4, seed=1, bound=0,
                                       policy=policy), cache_rows=60,
                         check_invariants=policy == "lfuopt").counts.miss_pull
        for policy in ("lfu", "lfuopt")
    }
    # Rows that were hot before the shift stay pinned under LFUOpt and crowd the cache.
    assert misses["lfuopt"] > misses["lfu"]


def test_het_policy_overrides_the_spec_policy() -> None:
    trace = InMemoryTrace.from_local_ids(np.zeros((4, 1), np.int64), [1])
    sched = create("het", workers=2, batch_size=2, policy="lfuopt")
    assert sched.plan_run(trace).cache_policy == "lfuopt"
    assert create("het", workers=2, batch_size=2).plan_run(trace).cache_policy is None


@pytest.mark.parametrize("knobs", [{"bound": -1}, {"clock_unit": "epoch"}, {"policy": "fifo"}])
def test_bad_knobs_name_the_field(knobs: dict) -> None:
    with pytest.raises(SpecError, match=next(iter(knobs))):
        create("het", workers=2, batch_size=2, **knobs)


def test_bound_must_fit_the_saturating_clock_lead() -> None:
    """Clock leads are kept in at most an int32 that saturates; a larger bound could not tell a
    saturated lead from an allowed one, so the spec refuses it and names the field."""
    create("het", workers=2, batch_size=2, bound=2**31 - 2)
    with pytest.raises(SpecError, match="bound"):
        create("het", workers=2, batch_size=2, bound=2**31 - 1)


@pytest.mark.parametrize(("bound", "occurrences"), [(100, 266), (126, 266), (127, 65546)])
def test_a_lead_past_the_clock_type_still_reads_stale(bound: int, occurrences: int) -> None:
    """Clocks are kept in the smallest integer type above the bound (int8 up to 126, then int16),
    and a copy's lead saturates at the type's maximum. Two workers read row 0 in every sample of
    two iterations: each pushes its ``occurrences`` updates every iteration, which puts the
    other copy that far behind: past the type's range, where a wrapping lead would read as 10
    and the second iteration's reads as hits."""
    trace = InMemoryTrace.from_local_ids(np.zeros((4 * occurrences, 1), np.int64), [1])
    sched = create("het", workers=2, batch_size=occurrences, bound=bound)
    c = simulate(trace, sched, cache_rows=occurrences).counts  # one iteration's ids must fit
    assert (c.miss_pull, c.update_pull, c.hits) == (2, 2, 0)
    assert (c.update_push, c.flush_push) == (4, 0)
