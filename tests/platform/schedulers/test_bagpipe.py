"""BagPipe over its replicated-cache executor: golden counts worked out by hand, consistency,
determinism and errors (rules: heraldbench.platform.sim._replicated's docstring).

Notation: W=2 workers, m=1, a single table of 8 rows, so a global batch is two row ids
``(a, b)``. With seed 0 the random partition gives sample 0 to w0 and sample 1 to w1 in batches
0…4 (batch 5 swaps them; asserted by ``test_random_partition_used_below``). "S" is the shared
membership set; a prefetched or admitted row costs W = 2 pulls; an all-reduced row costs 2(W−1) = 2 row-transfers (metrics.ring_allreduce).
Window of batch b: [b, b+L); "reuse" means a use in (b, b+L) known when b runs.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from heraldbench.platform.data import InMemoryTrace, SampleChunk, TraceSource
from heraldbench.platform.exceptions import CapacityError, InvariantViolation, SpecError
from heraldbench.platform.schedulers import create
from heraldbench.platform.schedulers._partitions import random_partition
from heraldbench.platform.sim import SimResult, decisions, simulate
from heraldbench.platform.sim import _replicated_check as check


def tiny(pairs: list[tuple[int, int]]) -> InMemoryTrace:
    return InMemoryTrace.from_local_ids(np.array(pairs).reshape(-1, 1), [8])


def run(trace: TraceSource, cache_rows: int, workers: int = 2, batch_size: int = 1,
        seed: int = 0, **knobs: float) -> SimResult:
    scheduler = create("bagpipe", workers=workers, batch_size=batch_size, seed=seed, **knobs)
    return simulate(trace, scheduler, cache_rows=cache_rows, check_invariants=True)


def series(result: SimResult, name: str) -> list[float]:
    return result.series[name].tolist()


def test_random_partition_used_below() -> None:
    assert [random_partition(2, 1, 0, b).tolist() for b in range(6)] == [[0, 1]] * 5 + [[1, 0]]


def test_golden_prefetch_leases_write_back_and_sync_classes() -> None:
    # L=4, proportion 0.5 -> cleanup points 0, 2, 4; K=8 never binds.
    #   b0 (0,1)  b1 (0,2)  b2 (3,3)  b3 (1,4)  b4 (5,6)  b5 (0,6)
    # cleanup 0: prefetch b0..b3 = {0,1,2,3,4}: 5 rows x W=2 = 10 pulls.
    # b0: 0 is in b1 -> sync-now; 1 reused at b3 -> sync-later. allreduce 2.
    # b1: 0 and 2 occur once, no reuse in [1,5) (b5 is not known yet) -> no-sync (owners w0, w1);
    #     both leases end at 1.
    # b2: 3 read by both workers (2 lookups, 1 row), no reuse -> sync-later. allreduce 1.
    # cleanup 2 (b5 now known): evict 0, 2 (written back: 2), although b5 uses 0 again; prefetch
    #     b4, b5 = {5,6,0}: 6 pulls (0 comes back after its write-back).
    # b3: 1 and 4 no-sync.  cleanup 4: evict 3, 1, 4 (3 write-backs); nothing left to prefetch.
    # b4: 6 is in b5 -> sync-now (1); 5 no-sync.  b5: 6 and 0 no-sync.
    # end: 5, 6, 0 still cached and updated -> flush 3.  Every lookup is a hit.
    result = run(tiny([(0, 1), (0, 2), (3, 3), (1, 4), (5, 6), (0, 6)]), 8,
                 lookahead=4, cleanup_proportion=0.5)
    c = result.counts
    assert (c.lookups, c.hits, c.miss_pull, c.update_pull) == (12, 12, 16, 0)
    assert (c.evict_push, c.update_push, c.flush_push, c.allreduce) == (5, 0, 3, 8.0)
    assert series(result, "miss_pull") == [10, 0, 6, 0, 0, 0]
    assert series(result, "evict_push") == [0, 0, 2, 0, 3, 0]
    assert series(result, "allreduce") == [4, 0, 2, 0, 2, 0]
    assert series(result, "hits") == [2] * 6
    info = result.info
    assert (info["sync_now"], info["sync_later"], info["no_sync"]) == (2, 2, 7)
    assert (info["prefetch_pull"], info["demand_pull"], info["transient_rows"]) == (16, 0, 0)
    assert info["cleanup_interval"] == 2 and info["peak_occupancy"] == 6


def test_golden_capacity_limited_prefetch_and_on_demand_fetch() -> None:
    # K=3, L=4, proportion 0.5 -> cleanup points 0, 2, 4.
    #   b0 (0,1)  b1 (2,3)  b2 (0,4)  b3 (2,5)  b4 (6,6)
    # cleanup 0: prefetch b0 = {0,1} (4 pulls); b1 would make 4 rows > 3: stop.
    # b0: hits 2; 0 reused at b2 -> sync-later (allreduce 1); 1 no-sync, lease ends.
    # b1: 2 and 3 missing: w0 pulls 2, w1 pulls 3 (2 demand pulls, 0 hits). One free slot:
    #     2 (reused at b3) is admitted, the other replica loads it too (+1 fill); 3 has no reuse
    #     -> transient, written back after the step (evict 1). 2 sync-later (allreduce 1),
    #     3 no-sync.  miss_pull[1] = 3.
    # cleanup 2: evict 1 (1 write-back); prefetch b2's missing 4 (2 pulls, S={0,2,4}); b3's 5
    #     would overflow: stop.
    # b2: hits 2, 0 and 4 no-sync.  b3: 2 hit, 5 missing with no reuse -> w1 pulls it,
    #     transient, written back (evict 1); both no-sync.
    # cleanup 4: evict 0, 4, 2 (3 write-backs); prefetch b4 = {6} (2 pulls).
    # b4: 6 read by both workers, no reuse -> sync-later (allreduce 1).  end: flush 1.
    result = run(tiny([(0, 1), (2, 3), (0, 4), (2, 5), (6, 6)]), 3,
                 lookahead=4, cleanup_proportion=0.5)
    c = result.counts
    assert (c.lookups, c.hits, c.miss_pull) == (10, 7, 12)
    assert (c.evict_push, c.flush_push, c.allreduce) == (6, 1, 6.0)
    assert series(result, "hits") == [2, 0, 2, 1, 2]
    assert series(result, "miss_pull") == [4, 3, 2, 1, 2]
    assert series(result, "evict_push") == [0, 1, 1, 1, 3]
    info = result.info
    assert (info["prefetch_pull"], info["demand_pull"], info["replica_fill"]) == (8, 3, 1)
    assert (info["sync_now"], info["sync_later"], info["no_sync"]) == (0, 3, 6)
    assert info["transient_rows"] == 2 and info["peak_occupancy"] == 3


def test_golden_on_demand_admits_sync_now_rows_first() -> None:
    # K=3, L=3, proportion 1 -> cleanup points 0, 3.
    #   b0 (0,1)  b1 (2,3)  b2 (3,0)  b3 (2,1)
    # cleanup 0: prefetch b0 (4 pulls); b1 does not fit.
    # b0: 0 reused at b2 -> sync-later (allreduce 1); 1 no-sync (b3 is not in [0,3)).
    # b1: one free slot. 3 is read by b2 (sync-now) and wins it over 2 (reused at b3 only,
    #     earlier in the batch): 2 demand pulls + 1 fill for 3; 2 transient (evict 1).
    #     Both all-reduced (allreduce 2).
    # b2: hits 2; 3 and 0 no-sync (b4 does not exist).
    # cleanup 3: evict 1, 3, 0 (3 write-backs; 1 although b3 reads it); prefetch b3 (4 pulls).
    # b3: hits 2, both no-sync.  end: flush 2.
    result = run(tiny([(0, 1), (2, 3), (3, 0), (2, 1)]), 3, lookahead=3, cleanup_proportion=1.0)
    c = result.counts
    assert (c.lookups, c.hits, c.miss_pull, c.evict_push, c.flush_push) == (8, 6, 11, 4, 2)
    assert series(result, "miss_pull") == [4, 3, 0, 4]
    assert series(result, "evict_push") == [0, 1, 0, 3]
    assert series(result, "allreduce") == [2, 4, 0, 0]
    info = result.info
    assert (info["sync_now"], info["sync_later"], info["no_sync"]) == (1, 2, 5)
    assert (info["demand_pull"], info["replica_fill"], info["transient_rows"]) == (2, 1, 1)


def test_lookahead_one_fetches_and_writes_back_every_batch() -> None:
    # L=1 sees only the current batch (BagPipe's baseline): cleanup at every iteration evicts
    # the previous batch (write-back) and prefetches the current one (x W).
    #   b0 (0,1)  b1 (0,1)  b2 (2,2)
    # pulls 4 + 4 + 2 = 10; write-backs 2 (cleanup 1) + 2 (cleanup 2); flush 1 (row 2);
    # b0, b1 rows are no-sync (nothing known ahead); 2 is read twice -> sync-later.
    result = run(tiny([(0, 1), (0, 1), (2, 2)]), 2, lookahead=1)
    c = result.counts
    assert (c.lookups, c.hits, c.miss_pull, c.evict_push, c.flush_push) == (6, 6, 10, 4, 1)
    assert c.allreduce == 2.0
    assert (result.info["no_sync"], result.info["sync_later"]) == (4, 1)


def _skewed(samples: int = 640, seed: int = 3) -> InMemoryTrace:
    rng = np.random.default_rng(seed)
    sizes = [7, 40, 300]
    local = np.stack([np.minimum(rng.zipf(1.4, samples) - 1, s - 1) for s in sizes], axis=1)
    return InMemoryTrace.from_local_ids(local, sizes)


@pytest.mark.parametrize("seed", [0, 5])
def test_lookups_match_the_per_worker_schedulers(seed: int) -> None:
    trace = _skewed()
    naive = simulate(trace, create("naive", workers=4, batch_size=8, seed=seed), cache_rows=60)
    result = run(trace, 60, workers=4, batch_size=8, seed=seed, lookahead=6)
    c = result.counts
    assert c.lookups == naive.counts.lookups
    # Prefetches and replica fills are pulls without a lookup.
    extra = result.info["prefetch_pull"] + result.info["replica_fill"]
    assert c.lookups + extra == c.hits + c.miss_pull + c.update_pull
    for name, values in result.series.items():
        assert values.sum() == getattr(c, name)


@pytest.mark.parametrize("lookahead", [1, 2, 3, 7, 40])
@pytest.mark.parametrize("proportion", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("cache_rows", [40, 60, 400])
def test_invariants_hold_across_knobs(lookahead: int, proportion: float, cache_rows: int) -> None:
    # The version model re-derives every count and raises on a stale read or pull.
    result = run(_skewed(320), cache_rows, workers=4, batch_size=8, lookahead=lookahead,
                 cleanup_proportion=proportion)
    assert result.info["peak_occupancy"] <= cache_rows
    assert result.counts.update_pull == result.counts.update_push == 0


def test_one_worker_never_all_reduces() -> None:
    result = run(_skewed(320), 60, workers=1, batch_size=8, lookahead=5)
    assert result.counts.allreduce == 0.0


class _Blocks(TraceSource):
    """The same samples streamed in blocks of an awkward size."""

    def __init__(self, trace: InMemoryTrace, block: int) -> None:
        self.inner, self.block = trace, block
        self.layout, self.num_samples, self.num_dense = trace.layout, trace.num_samples, 0

    def _blocks(self) -> Iterator[SampleChunk]:
        whole = SampleChunk(self.inner.ids, self.inner.labels, self.inner.dense)
        for start in range(0, self.num_samples, self.block):
            yield whole.slice(start, start + self.block)


def test_streaming_and_reruns_give_identical_results() -> None:
    trace = _skewed(700)  # 21 full batches of 32, 28 samples dropped
    first = run(trace, 50, workers=4, batch_size=8, seed=4, lookahead=5)
    again = run(_Blocks(trace, 7), 50, workers=4, batch_size=8, seed=4, lookahead=5)
    assert first.counts == again.counts
    assert first.samples_dropped == 28
    for name in first.series:
        np.testing.assert_array_equal(first.series[name], again.series[name])


def test_partitions_are_naives() -> None:
    trace = _skewed(320)
    scheduler = create("bagpipe", workers=4, batch_size=8, seed=9)
    mine = simulate(trace, scheduler, cache_rows=60, record_partitions=True).partitions
    naive = simulate(trace, create("naive", workers=4, batch_size=8, seed=9), cache_rows=60,
                     record_partitions=True).partitions
    np.testing.assert_array_equal(mine, naive)


@pytest.mark.parametrize(
    ("knobs", "field", "value"),
    [
        ({"lookahead": 0}, "lookahead", "0"),
        ({"lookahead": -3}, "lookahead", "-3"),
        ({"cleanup_proportion": 0.0}, "cleanup_proportion", "0.0"),
        ({"cleanup_proportion": 1.5}, "cleanup_proportion", "1.5"),
    ],
)
def test_bad_knobs_name_the_field_and_value(knobs: dict, field: str, value: str) -> None:
    with pytest.raises(SpecError, match=field) as info:
        create("bagpipe", workers=2, batch_size=1, **knobs)
    assert value in str(info.value)


def test_cleanup_interval_follows_bagpipe() -> None:
    def interval(**knobs: float) -> int:
        return create("bagpipe", workers=2, batch_size=1, **knobs).cleanup_interval

    assert interval() == 50 and interval(lookahead=3) == 1 and interval(lookahead=8) == 2


def test_a_cache_smaller_than_one_batch_is_refused() -> None:
    trace = tiny([(0, 0), (1, 2)])  # batch 1 has 2 distinct rows
    with pytest.raises(CapacityError, match=r"batch 1 has 2 distinct rows.* holds 1 rows"):
        run(trace, 1, lookahead=2)
    assert run(trace, 2, lookahead=2).counts.lookups == 4  # w0 and w1 both read row 0


def _checker_after_b0(monkeypatch: pytest.MonkeyPatch, resident_b0: bool) -> check.ReplicaChecker:
    """A checker fed b0 = (0,1), b1 = (0,2) whose sync rule mislabels every row sync-later."""
    monkeypatch.setattr(check.ReplicaChecker, "_classes",
                        lambda self, b, rows, counts: np.full(len(rows), check._LATER))
    checker = check.ReplicaChecker(rows=8, workers=2, capacity=8, lookahead=2, iterations=2)
    for j, pair in enumerate([(0, 1), (0, 2)]):
        checker.add_batch(j, np.array(pair).reshape(2, 1), np.array([0, 1]))
    resident = np.zeros(8, bool)
    resident[[0, 1]] = resident_b0
    checker.cleanup(0, np.zeros(0, np.int64), resident)
    checker.run(0, resident)
    return checker


def test_checker_catches_a_read_before_the_all_reduce_lands(monkeypatch) -> None:
    checker = _checker_after_b0(monkeypatch, resident_b0=True)
    resident = np.zeros(8, bool)
    resident[[0, 1]] = True
    with pytest.raises(InvariantViolation, match=r"worker 0 reads rows \[0\]"):
        checker.run(1, resident)


def test_checker_catches_a_pull_before_the_write_back_lands(monkeypatch) -> None:
    checker = _checker_after_b0(monkeypatch, resident_b0=False)  # b0's rows were transient
    with pytest.raises(InvariantViolation, match=r"rows \[0\] pulled before"):
        checker.run(1, np.zeros(8, bool))


def test_golden_released_variant() -> None:
    # variant released, L=3, proportion 1.0 -> cleanup points 0, 3; K=1 is never looked at.
    #   b0 (0,1)  b1 (0,2)  b2 (3,3)  b3 (1,4)  b4 (5,6): 5 batches, the last L=3 never run.
    # cleanup 0 (window b0..b2): prefetch {0,1,2,3}: 4 rows x W=2 = 8 pulls.
    # b0: 0 is in b1 -> sync-now, lease to 1 (allreduce 2); 1 occurs once and b3 is not known
    #     yet -> no-sync, its lease ends at 0.
    # b1 (b3 now known): 0 and 2 occur once, no reuse -> no-sync; both leases end at 1.
    # end after b1: rows 0, 1, 2 updated and still cached (the cleanup at 3 never comes): flush 3.
    trace = tiny([(0, 1), (0, 2), (3, 3), (1, 4), (5, 6)])
    result = run(trace, 1, lookahead=3, cleanup_proportion=1.0, variant="released")
    c = result.counts
    assert (result.iterations, result.samples_dropped) == (2, 6)
    assert (c.lookups, c.hits, c.miss_pull, c.evict_push, c.flush_push) == (4, 4, 8, 0, 3)
    assert c.allreduce == 2.0
    assert (result.info["sync_now"], result.info["sync_later"], result.info["no_sync"]) == (1, 0, 3)
    scheduler = create("bagpipe", workers=2, batch_size=1, lookahead=3, cleanup_proportion=1.0,
                       variant="released")
    stream = list(decisions(trace, scheduler, cache_rows=1))
    assert [d.iteration for d in stream] == [0, 1]
    assert sorted(set(stream[0].prefetch_ids.tolist())) == [0, 1, 2, 3]
    assert (stream[0].sync_now_ids.tolist(), stream[0].no_sync_ids.tolist()) == ([0], [1])
    assert (stream[0].lease_ids.tolist(), stream[0].lease_ends.tolist()) == ([0], [1])
    assert sorted(stream[1].no_sync_ids.tolist()) == [0, 2] and stream[1].lease_ids.size == 0
    assert all(d.allreduce_rows == d.sync_now_ids.size + d.sync_later_ids.size for d in stream)


def test_released_variant_slices_batches_and_ignores_the_cache_size() -> None:
    trace = _skewed(320)
    scheduler = create("bagpipe", workers=4, batch_size=8, lookahead=5, variant="released")
    result = simulate(trace, scheduler, cache_rows=1, record_partitions=True,
                      check_invariants=True)  # fmt: skip
    assert result.iterations == 320 // 32 - 5
    assert (result.partitions == np.repeat(np.arange(4), 8)).all()
    assert result.info["peak_occupancy"] > 1 and result.info["transient_rows"] == 0
    with pytest.raises(CapacityError):
        run(trace, 1, workers=4, batch_size=8, lookahead=5)  # the normative variant bounds K


def test_released_variant_on_a_trace_shorter_than_two_windows() -> None:
    """4 batches, L = 3: one iteration runs, and the window still holds its L batches (the ring
    once had room for 2, and the third batch overwrote the first before it ran)."""
    trace = tiny([(0, 1), (0, 2), (3, 3), (1, 4)])
    knobs = {"workers": 2, "batch_size": 1, "lookahead": 3, "cleanup_proportion": 1.0,
             "variant": "released"}
    result = simulate(trace, create("bagpipe", **knobs), cache_rows=1, check_invariants=True)
    assert (result.iterations, result.info["no_sync"]) == (1, 1)
    (only,) = decisions(trace, create("bagpipe", **knobs), cache_rows=1)
    assert only.batch.ids.ravel().tolist() == [0, 1]
    assert sorted(set(only.prefetch_ids.tolist())) == [0, 1, 2, 3]
    assert (only.sync_now_ids.tolist(), only.no_sync_ids.tolist()) == ([0], [1])


def test_released_variant_needs_a_window_of_two_batches() -> None:
    with pytest.raises(SpecError, match="lookahead >= 2"):
        create("bagpipe", workers=2, batch_size=1, lookahead=1, variant="released")


@pytest.mark.parametrize("variant", ["normative", "released"])
def test_the_stream_names_the_rows_the_counts_count(variant: str) -> None:
    trace = _skewed(320)
    knobs = {"workers": 4, "batch_size": 8, "lookahead": 4, "variant": variant}
    counted = simulate(trace, create("bagpipe", **knobs), cache_rows=60)
    stream = list(decisions(trace, create("bagpipe", **knobs), cache_rows=60))
    assert len(stream) == counted.iterations
    for name in ("sync_now", "sync_later", "no_sync"):
        assert sum(getattr(d, f"{name}_ids").size for d in stream) == counted.info[name]
    for d in stream:  # a leased row is one of the batch's, kept past it
        assert (d.lease_ends > d.iteration).all()
        assert np.isin(d.lease_ids, d.batch.ids).all()
