"""The contract every registered scheduler keeps (run over the whole registry)."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.counters import TALLY, tally_of
from heraldbench.platform.data import InMemoryTrace
from heraldbench.platform.exceptions import SpecError, UnknownNameError
from heraldbench.platform.metrics import Counts
from heraldbench.platform.schedulers import CacheView, SyncRule, create, registered
from heraldbench.platform.sim import decisions, simulate

KINDS = sorted(registered())
WORKERS, BATCH = 4, 8


def _skewed_trace(samples: int = 640, seed: int = 3) -> InMemoryTrace:
    rng = np.random.default_rng(seed)
    sizes = [7, 40, 300]
    local = np.stack([np.minimum(rng.zipf(1.4, samples) - 1, s - 1) for s in sizes], axis=1)
    return InMemoryTrace.from_local_ids(local, sizes)


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


def test_partition_gives_every_worker_exactly_its_batch(kind: str) -> None:
    trace = _skewed_trace()
    scheduler = create(kind, workers=WORKERS, batch_size=BATCH, seed=1)
    rows = trace.layout.total_rows
    rng = np.random.default_rng(0)
    valid = rng.integers(0, 2**WORKERS, rows).astype(np.uint8)
    view = CacheView(valid=valid, cached=valid)
    for iteration in range(5):
        ids = trace.ids[iteration * WORKERS * BATCH : (iteration + 1) * WORKERS * BATCH]
        assign = scheduler.partition(ids, view, iteration)
        assert assign.shape == (WORKERS * BATCH,)
        assert np.bincount(assign, minlength=WORKERS).tolist() == [BATCH] * WORKERS


def test_partition_is_deterministic_for_a_seed(kind: str) -> None:
    trace = _skewed_trace()
    ids = trace.ids[: WORKERS * BATCH]
    view = CacheView(valid=np.zeros(trace.layout.total_rows, np.uint8),
                     cached=np.zeros(trace.layout.total_rows, np.uint8))
    first = create(kind, workers=WORKERS, batch_size=BATCH, seed=7).partition(ids, view, 3)
    again = create(kind, workers=WORKERS, batch_size=BATCH, seed=7).partition(ids, view, 3)
    np.testing.assert_array_equal(first, again)


def test_sync_policy_is_declared(kind: str) -> None:
    policy = create(kind, workers=WORKERS, batch_size=BATCH).sync_policy
    assert policy.rule in SyncRule
    assert policy.window >= 1


def test_simulation_keeps_the_invariants_and_balances_its_books(kind: str) -> None:
    trace = _skewed_trace()
    scheduler = create(kind, workers=WORKERS, batch_size=BATCH, seed=2)
    plan = scheduler.plan_run(trace)
    result = simulate(trace, scheduler, cache_rows=60, check_invariants=True, plan=plan)
    c = result.counts
    if plan.oracle is None:
        assert c.lookups == c.hits + c.miss_pull + c.update_pull
    else:  # prefetching executors also pull rows nobody has looked up yet
        assert c.hits <= c.lookups <= c.hits + c.miss_pull + c.update_pull
    assert c.accesses == result.iterations * WORKERS * BATCH * 3
    # Every dirty copy is written back exactly once: by an update push, an evict push or the
    # final flush; write-through leaves nothing dirty.
    if scheduler.sync_policy.rule is SyncRule.WRITE_THROUGH and plan.oracle is None:
        # A replicated table still loaded at the end (FAE ending in a hot phase) is written
        # back once: |H| flush pushes (docs/semantics.md, "Replicated rows").
        ends_hot = result.info["trace"].get("ends_in_hot_phase", False)
        expected_flush = len(plan.replicated_rows) if ends_hot else 0
        assert c.flush_push == expected_flush and c.evict_push == 0
    for name, series in result.series.items():
        assert series.shape == (result.iterations,)
        assert series.sum() == getattr(c, name)


def test_the_simulator_counts_exactly_the_decision_stream(kind: str) -> None:
    """What the stream says, counted by the contract's rules, is what the simulator reports."""
    trace = _skewed_trace()
    scheduler = create(kind, workers=WORKERS, batch_size=BATCH, seed=2)
    expected = simulate(trace, scheduler, cache_rows=60).counts
    total = np.zeros(len(TALLY))
    iterations = 0
    for dec in decisions(trace, create(kind, workers=WORKERS, batch_size=BATCH, seed=2),
                         cache_rows=60):  # fmt: skip
        assert dec.iteration == iterations
        iterations += 1
        total += tally_of(dec, WORKERS)
    tally = dict(zip(TALLY, total, strict=True))
    lookups = tally["hits"] + tally["miss_pull"] + tally["update_pull"] - tally["prefetch"]
    counted = Counts.from_series(tally, accesses=expected.accesses, lookups=int(lookups),
                                 flush_push=expected.flush_push)  # fmt: skip
    assert iterations > 0 and counted == expected


def test_unknown_knob_is_rejected_with_its_name(kind: str) -> None:
    with pytest.raises(SpecError, match="no_such_knob"):
        create(kind, workers=WORKERS, batch_size=BATCH, no_such_knob=3)


def test_bad_cluster_is_rejected_with_the_value() -> None:
    with pytest.raises(SpecError, match="65"):
        create("naive", workers=65, batch_size=BATCH)
    with pytest.raises(SpecError, match="0"):
        create("naive", workers=2, batch_size=0)


def test_unknown_kind_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError) as info:
        create("hearld", workers=2, batch_size=2)
    assert "herald" in str(info.value) and "naive" in str(info.value)
