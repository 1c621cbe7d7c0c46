"""FAE: profile, hot set, reordering into pure batches, golden counts worked out by hand,
all-reduce modes, determinism and errors (rules: heraldbench.platform.schedulers._fae's docstring,
docs/semantics.md "Replicated rows (FAE) and all-reduce").

Golden notation: W=2 workers, m=1 (B=2), K=8 rows per cache (never binds). With seed 0 the random
partition gives sample 0 of a batch to w0 and sample 1 to w1 in batches 0…4 (asserted by
``test_random_partition_used_below``). All-reduce of R rows counts 2(W−1)·R = 2R row-transfers
(each of the W workers sends 2(W−1)/W·R = R; the counter sums over workers, as for pulls).
"""

from __future__ import annotations

import tempfile

import numpy as np
import pytest

from heraldbench.platform.data import InMemoryTrace
from heraldbench.platform.data import spill as spill_module
from heraldbench.platform.data.workload import ProfileTrace
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.schedulers import CacheView, FAESpec, _fae, create, fae_profile
from heraldbench.platform.schedulers._partitions import random_partition
from heraldbench.platform.sim import SimResult, simulate
from tests.platform.data.streamed import StreamedIdsTrace, StreamedTrace
from tests.platform.data.workload.planted import planted_profile

# Two tables of 4 rows: local (a, b) is global (a, 4 + b).
GOLDEN = [
    (0, 0),  # s0  (0,4) hot
    (0, 1),  # s1  (0,5) cold: reads hot row 0 and cold row 5
    (0, 0),  # s2  hot
    (1, 0),  # s3  (1,4) cold
    (0, 0),  # s4  hot
    (0, 2),  # s5  (0,6) cold
    (0, 0),  # s6  hot
    (0, 0),  # s7  hot
    (3, 3),  # s8  (3,7) cold
    (0, 0),  # s9  hot
    (1, 1),  # s10 (1,5) cold
    (0, 0),  # s11 hot
]
# Trace counts: row 0 in 9 samples, row 4 in 8, rows 1 and 5 in 2, rows 3, 6, 7 in 1, row 2 in 0.
# hot_ratio 0.25 of 8 rows: N = 2; the 12 draws (rate 1.0) keep rows 0 and 4 far ahead: H = {0, 4}.
# Hot samples (all ids in H): s0 s2 s4 s6 s7 s9 s11 = 7 of 12 -> share 7/12.
# Hot batches H0 [s0 s2], H1 [s4 s6], H2 [s7 s9]; s11 dropped.
# Cold batches C0 [s1 s3], C1 [s5 s8]; s10 dropped. 2 samples dropped by the reordering.


def golden_trace() -> InMemoryTrace:
    return InMemoryTrace.from_local_ids(np.array(GOLDEN), [4, 4])


def run(trace: InMemoryTrace, cache_rows: int = 8, workers: int = 2, batch_size: int = 1,
        seed: int = 0, **knobs: object) -> SimResult:
    scheduler = create("fae", workers=workers, batch_size=batch_size, seed=seed, **knobs)
    return simulate(trace, scheduler, cache_rows=cache_rows, check_invariants=True)


def series(result: SimResult, name: str) -> list[float]:
    return result.series[name].tolist()


def test_random_partition_used_below() -> None:
    assert [random_partition(2, 1, 0, b).tolist() for b in range(5)] == [[0, 1]] * 5


def test_profile_hot_set_and_reordered_batches() -> None:
    scheduler = create("fae", workers=2, batch_size=1, seed=0, hot_ratio=0.25, sampling_rate=1.0)
    plan = scheduler.plan_run(golden_trace())
    prepared = plan.trace
    assert plan.replicated_rows.tolist() == [0, 4]
    assert plan.replicated_rows.dtype == np.int32
    info = prepared.describe()
    assert info["hot_rows"] == 2 and info["sampled_samples"] == 12
    assert info["hot_input_share"] == pytest.approx(7 / 12)
    assert (info["phases"], info["hot_batches"], info["cold_batches"]) == (2, 3, 2)
    assert info["samples_dropped_by_reordering"] == 2
    assert (info["samples"], info["source_samples"]) == (10, 12)
    assert info["ends_in_hot_phase"]
    # C0 [s1 s3], C1 [s5 s8], then H0 H1 H2.
    expected = [(0, 5), (1, 4), (0, 6), (3, 7)] + [(0, 4)] * 6
    assert prepared.materialize().ids.tolist() == [list(p) for p in expected]
    assert [scheduler.is_hot(b) for b in range(6)] == [False, False, True, True, True, False]


def test_golden_one_switch_per_epoch() -> None:
    # it0 C0: s1 (0,5) -> w0, s3 (1,4) -> w1: 4 miss pulls; write-through pushes all 4.
    # it1 C1: s5 (0,6) -> w0: row 0 valid at w0 (w0 wrote it, sole writer) -> hit; 6 miss.
    #         s8 (3,7) -> w1: 2 misses. Pushes 4 (every trained row).
    # it2 H0: entering the hot phase loads H on both workers: W·|H| = 4 miss pulls;
    #         dense all-reduce of |H| = 2 rows: 2(W-1)·2 = 4.   it3 H1, it4 H2: all-reduce 4 each.
    # end in the hot phase: one replica of H written back, flush |H| = 2.
    result = run(golden_trace(), hot_ratio=0.25, sampling_rate=1.0)
    c = result.counts
    assert (c.hits, c.miss_pull, c.update_pull) == (1, 11, 0)
    assert (c.evict_push, c.update_push, c.flush_push, c.allreduce) == (0, 8, 2, 12.0)
    assert c.accesses == 5 * 2 * 2
    assert series(result, "miss_pull") == [4, 3, 4, 0, 0]
    assert series(result, "update_push") == [4, 4, 0, 0, 0]
    assert series(result, "allreduce") == [0, 0, 4, 4, 4]
    assert result.samples_dropped == 0 and result.iterations == 5


def test_golden_switch_every_batch() -> None:
    # switch_period 1: C0, H0, C1, H1, H2 (cold runs out: the last hot phase is 2 batches long).
    # it0 C0: 4 miss, 4 push; w0 caches 0 and 5, w1 caches 1 and 4 (valid, clean).
    # it1 H0: enter: 4 miss pulls; all-reduce 4.
    # it2 C1: leave: one replica written back (2 update pushes) and every cached copy of H
    #         outdated (w0's 0, w1's 4). s5 (0,6) -> w0: 0 outdated -> update pull; 6 miss.
    #         s8 (3,7) -> w1: 2 misses. Pushes 4 more: 6 this iteration.
    # it3 H1: enter again: 4 miss pulls; all-reduce 4.  it4 H2: all-reduce 4.  End hot: flush 2.
    result = run(golden_trace(), hot_ratio=0.25, sampling_rate=1.0, switch_period=1)
    c = result.counts
    assert (c.hits, c.miss_pull, c.update_pull) == (0, 15, 1)
    assert (c.evict_push, c.update_push, c.flush_push, c.allreduce) == (0, 10, 2, 12.0)
    assert series(result, "miss_pull") == [4, 4, 3, 4, 0]
    assert series(result, "update_pull") == [0, 0, 1, 0, 0]
    assert series(result, "update_push") == [4, 0, 6, 0, 0]
    assert series(result, "allreduce") == [0, 4, 0, 4, 4]
    assert result.info["trace"]["phases"] == 4


def allreduce_trace() -> InMemoryTrace:
    # One table of 8 rows. Row 0 in 6 samples, row 1 in 6, row 7 in 2: H = {0, 1} (N = 2).
    rows = [0, 0, 0, 1, 1, 1, 7, 7, 0, 1, 0, 1, 1, 0]
    return InMemoryTrace.from_local_ids(np.array(rows).reshape(-1, 1), [8])


def test_sparse_allreduce_counts_the_rows_each_hot_batch_touches() -> None:
    # Cold batch [7 7] first: w0 and w1 both miss 7 and co-write it: 2 pulls, 2 pushes.
    # Hot batches [0 0] [0 1] [1 1] [0 1] [0 1] [1 0]: distinct rows 1 2 1 2 2 2 = 10.
    # Sparse: 2(W-1)·10 = 20; dense: 6 batches × |H| = 2 rows -> 24. Entry 2·2 = 4 pulls, flush 2.
    sparse = run(allreduce_trace(), hot_ratio=0.25, sampling_rate=1.0, allreduce="sparse")
    dense = run(allreduce_trace(), hot_ratio=0.25, sampling_rate=1.0)
    assert series(sparse, "allreduce") == [0, 2, 4, 2, 4, 4, 4]
    assert series(dense, "allreduce") == [0] + [4] * 6
    for result in (sparse, dense):
        c = result.counts
        assert (c.miss_pull, c.update_push, c.flush_push) == (6, 2, 2)


def test_switch_period_alternates_and_the_longer_class_finishes() -> None:
    # Row 0 is hot (6 of 16 samples); rows 1..10 are cold, one sample each.
    rows = [1, 0, 2, 3, 0, 4, 5, 0, 6, 7, 8, 9, 10, 0, 0, 0]
    trace = InMemoryTrace.from_local_ids(np.array(rows).reshape(-1, 1), [16])
    hot = [0, 0]
    order = {
        None: [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], hot, hot, hot],
        2: [[1, 2], [3, 4], hot, hot, [5, 6], [7, 8], hot, [9, 10]],
        3: [[1, 2], [3, 4], [5, 6], hot, hot, hot, [7, 8], [9, 10]],
    }
    phases = {None: 2, 2: 5, 3: 3}
    for period, batches in order.items():
        scheduler = create("fae", workers=2, batch_size=1, hot_ratio=1 / 16, sampling_rate=1.0,
                           switch_period=period)
        prepared = scheduler.plan_run(trace).trace
        assert prepared.materialize().ids.ravel().tolist() == sum(batches, [])
        assert [scheduler.is_hot(b) for b in range(8)] == [pair == hot for pair in batches]
        assert prepared.describe()["phases"] == phases[period]


def test_phase_plan() -> None:
    assert _fae.phase_plan(3, 5, None) == [(False, 5), (True, 3)]
    assert _fae.phase_plan(3, 5, 2) == [(False, 2), (True, 2), (False, 2), (True, 1), (False, 1)]
    assert _fae.phase_plan(5, 1, 2) == [(False, 1), (True, 5)]
    assert _fae.phase_plan(0, 0, 2) == []


def test_top_rows_breaks_ties_by_row_id_and_skips_unsampled_rows() -> None:
    counts = np.array([0, 3, 1, 3, 3, 0, 5])
    assert fae_profile.top_rows(counts, 2).tolist() == [1, 6]
    assert fae_profile.top_rows(counts, 3).tolist() == [1, 3, 6]
    assert fae_profile.top_rows(counts, 10).tolist() == [1, 2, 3, 4, 6]


def skewed_trace(samples: int = 20_000, seed: int = 5) -> InMemoryTrace:
    rng = np.random.default_rng(seed)
    sizes = [100, 1000, 3000]
    local = np.stack([np.minimum(rng.zipf(1.3, samples) - 1, s - 1) for s in sizes], axis=1)
    return InMemoryTrace.from_local_ids(local, sizes)


def test_profile_draws_with_replacement_and_streams_across_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trace = skewed_trace(2_000)
    monkeypatch.setattr(_fae, "READ_SAMPLES", 37)  # many chunk boundaries
    monkeypatch.setattr(fae_profile, "READ_SAMPLES", 37)
    counts, draws = fae_profile.sample_access_counts(trace, 0.05, np.random.default_rng(1))
    assert draws == 100 and counts.sum() == 100 * 3
    scheduler = create("fae", workers=4, batch_size=8, seed=1, hot_ratio=0.05, switch_period=3)
    plan = scheduler.plan_run(trace)
    prepared = plan.trace
    hot = np.isin(trace.ids, plan.replicated_rows).all(axis=1)
    b = scheduler.global_batch
    by_class = {True: trace.ids[hot], False: trace.ids[~hot]}
    expected, taken = [], {True: 0, False: 0}
    for is_hot, batches in prepared.phases:
        expected.append(by_class[is_hot][taken[is_hot] : taken[is_hot] + batches * b])
        taken[is_hot] += batches * b
    np.testing.assert_array_equal(prepared.materialize().ids, np.concatenate(expected))
    dropped = int(hot.sum()) % b + int((~hot).sum()) % b
    assert prepared.describe()["samples_dropped_by_reordering"] == dropped
    assert prepared.describe()["hot_input_share"] == pytest.approx(hot.mean())


def test_same_seed_same_run_other_seeds_sample_differently() -> None:
    trace = skewed_trace(5_000)
    knobs = dict(workers=4, batch_size=16, hot_ratio=0.05, sampling_rate=0.02)
    first = create("fae", seed=3, **knobs)
    again = create("fae", seed=3, **knobs)
    first_plan, again_plan = first.plan_run(trace), again.plan_run(trace)
    a = simulate(trace, first, cache_rows=200, plan=first_plan)
    b = simulate(trace, again, cache_rows=200, plan=again_plan)
    np.testing.assert_array_equal(first_plan.replicated_rows, again_plan.replicated_rows)
    assert a.counts == b.counts
    hot_sets = {tuple(_prepared_hot_rows(trace, seed, knobs)) for seed in range(4)}
    assert len(hot_sets) > 1


def _prepared_hot_rows(trace: InMemoryTrace, seed: int, knobs: dict) -> list[int]:
    scheduler = create("fae", seed=seed, **knobs)
    return scheduler.plan_run(trace).replicated_rows.tolist()


def test_fae_cuts_pulls_and_pushes_against_naive_at_an_all_reduce_cost() -> None:
    trace = skewed_trace()
    naive = simulate(trace, create("naive", workers=4, batch_size=16), cache_rows=400).counts
    fae = run(trace, cache_rows=400, workers=4, batch_size=16, hot_ratio=0.1).counts
    assert fae.pull + fae.push < 0.5 * (naive.pull + naive.push)
    assert fae.allreduce > 0


def test_before_prepare_every_batch_is_cold_and_balanced() -> None:
    scheduler = create("fae", workers=4, batch_size=8, seed=1)
    ids = np.zeros((32, 3), np.int32)
    view = CacheView(valid=np.zeros(8, np.uint8), cached=np.zeros(8, np.uint8))
    plan = scheduler.plan(ids, view, 0)
    assert not plan.replicated and plan.allreduce_rows == 0
    assert np.bincount(plan.assign, minlength=4).tolist() == [8] * 4


def test_no_hot_sample_means_no_hot_phase() -> None:
    # Every sample reads a row seen once; with N = 1 only one sample can be hot, a partial batch.
    trace = InMemoryTrace.from_local_ids(np.arange(8).reshape(-1, 1), [8])
    result = run(trace, hot_ratio=0.125, sampling_rate=1.0)
    c = result.counts
    assert (c.allreduce, c.flush_push) == (0.0, 0)
    assert result.info["trace"]["hot_batches"] == 0


def test_hot_budget_sets_the_hot_row_count() -> None:
    spec = FAESpec(hot_budget="256MiB")
    assert spec.hot_budget == 2**28 and spec.hot_ratio is None
    assert spec.hot_row_target(10**9) == 2**28 // (128 * 4)
    assert FAESpec().hot_ratio == 0.01 and FAESpec().hot_row_target(1000) == 10
    result = run(skewed_trace(2_000), cache_rows=200, workers=4, batch_size=8,
                 hot_budget="2KiB", embedding_dim=64)
    assert result.info["trace"]["hot_rows"] == 2048 // 256


@pytest.mark.parametrize(
    ("knobs", "field", "value"),
    [
        ({"hot_ratio": 1.5}, "hot_ratio", "1.5"),
        ({"hot_ratio": 0}, "hot_ratio", "0"),
        ({"hot_budget": "12 parsecs"}, "hot_budget", "12 parsecs"),
        ({"hot_budget": "100B"}, "hot_budget", "100"),
        ({"hot_ratio": 0.1, "hot_budget": "1MiB"}, "hot_budget", "1MiB"),
        ({"hot_ratio": None}, "hot_ratio", "neither"),
        ({"sampling_rate": 0}, "sampling_rate", "0"),
        ({"switch_period": 0}, "switch_period", "0"),
        ({"allreduce": "ring"}, "allreduce", "ring"),
    ],
)
def test_bad_knob_names_the_field_and_value(knobs: dict, field: str, value: str) -> None:
    with pytest.raises(SpecError) as info:
        create("fae", workers=2, batch_size=1, **knobs)
    assert field in str(info.value) and value in str(info.value)


def test_run_result_reports_the_hot_input_share() -> None:
    from heraldbench.platform.runner import simulate_run
    from heraldbench.platform.spec import parse_spec

    spec = parse_spec(
        {
            "name": "fae-share",
            "dataset": {"kind": "synthetic-criteo", "samples": 20_000, "scale": 0.01},
            "cluster": {"workers": 2, "batch_size": 32},
            "cache": {"ratio": 0.1},
            "schedulers": [{"kind": "naive"}, {"kind": "fae"}],
        }
    )
    naive, fae = (simulate_run(spec, s).to_json(spec) for s in spec.schedulers)
    assert naive["schedule"] is None  # replays the trace as given
    schedule = fae["schedule"]
    assert 0 < schedule["hot_input_share"] < 1 and schedule["hot_rows"] > 0
    assert schedule["samples"] + schedule["samples_dropped_by_reordering"] == 20_000


def test_profile_is_the_same_with_and_without_random_access(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Random access (only the sampled positions read, the hot/cold split on all cores, each
    class's samples read apart) is a shortcut: the counts, the hot set, the split and the
    replayed trace equal those of a front-to-back read."""
    monkeypatch.setattr(fae_profile, "READ_SAMPLES", 41)
    direct = skewed_trace(3_000, seed=8)
    streamed = StreamedTrace(direct)
    assert direct.random_access and not streamed.random_access
    profiles = [
        fae_profile.sample_access_counts(trace, 0.2, np.random.default_rng(4))
        for trace in (direct, streamed)
    ]
    np.testing.assert_array_equal(profiles[0][0], profiles[1][0])
    assert streamed.passes == 1  # read once for all the draws, not once per batch of them
    hot_rows = fae_profile.top_rows(profiles[0][0], 60)
    bits = fae_profile.hot_row_bits(hot_rows, direct.layout.total_rows)
    expected = int(np.isin(direct.ids, hot_rows).all(axis=1).sum())
    assert 0 < expected < direct.num_samples
    found = [fae_profile.find_hot_samples(trace, bits) for trace in (direct, streamed)]
    np.testing.assert_array_equal(found[0], found[1])
    is_hot = fae_profile.bits_between(found[0], 0, direct.num_samples)
    np.testing.assert_array_equal(is_hot, np.isin(direct.ids, hot_rows).all(axis=1))
    assert int(is_hot.sum()) == expected
    assert streamed.passes == 2
    replayed = []
    for trace in (direct, streamed):
        scheduler = create("fae", workers=4, batch_size=8, seed=3, hot_ratio=0.02,
                           switch_period=2)
        replayed.append(scheduler.plan_run(trace).trace.materialize())
    np.testing.assert_array_equal(replayed[0].ids, replayed[1].ids)
    np.testing.assert_array_equal(replayed[0].labels, replayed[1].labels)


def test_a_source_without_random_access_is_read_once(tmp_path, monkeypatch):
    """FAE passes over its trace four times; a front-to-back source is spilled to disk on the
    first and read there after, with the same schedule and replayed trace."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the spill's directory
    direct = skewed_trace(3_000, seed=8)
    streamed = StreamedTrace(direct)
    plans = [create("fae", workers=4, batch_size=8, seed=3, hot_ratio=0.02,
                    switch_period=2).plan_run(trace) for trace in (direct, streamed)]  # fmt: skip
    replayed = [plan.trace.materialize() for plan in plans]
    np.testing.assert_array_equal(replayed[0].ids, replayed[1].ids)
    np.testing.assert_array_equal(replayed[0].labels, replayed[1].labels)
    np.testing.assert_array_equal(plans[0].replicated_rows, plans[1].replicated_rows)
    assert streamed.passes == 1


def test_a_simulation_of_a_source_that_makes_ids_apart_reads_ids_alone(tmp_path, monkeypatch):
    """A counting run replays ids only: a source that makes them apart (a profile's generator)
    is generated once, ids alone, for the offline phase and the replay; labels are made (one
    more pass) only when a trainer asks for whole samples."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the spill's directory
    direct = skewed_trace(3_000, seed=8)
    streamed = StreamedIdsTrace(direct)
    plans = [create("fae", workers=4, batch_size=8, seed=3, hot_ratio=0.02,
                    switch_period=2).plan_run(trace) for trace in (direct, streamed)]  # fmt: skip
    replayed = [np.concatenate([c.ids for c in plan.trace.chunks(100, ids_only=True)])
                for plan in plans]  # fmt: skip
    np.testing.assert_array_equal(replayed[0], replayed[1])
    np.testing.assert_array_equal(replayed[0], plans[0].trace.materialize().ids)
    assert (streamed.id_passes, streamed.passes) == (1, 0)
    whole = plans[1].trace.materialize()
    np.testing.assert_array_equal(whole.labels, plans[0].trace.materialize().labels)
    assert (streamed.id_passes, streamed.passes) == (1, 1)


def test_fae_on_a_profile_trace_equals_fae_on_the_same_samples_held_in_memory(
    tmp_path, monkeypatch
):
    """The real path of a simulation on a profile: the ids spilled as they are made on two
    threads, the replay's ids read back, whole samples computed from them; the schedule and
    the replayed trace equal FAE's on the very samples held in memory (random access)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(spill_module, "usable_cores", lambda: 2)
    profile = ProfileTrace(planted_profile(), samples=6_000, seed=4)
    held = profile.materialize()

    def plan(trace):
        return create("fae", workers=4, batch_size=8, seed=3, hot_ratio=0.05).plan_run(trace)

    plans = [plan(held), plan(profile)]
    assert plans[1].trace.source.describe()["spilled"] == "ids"
    np.testing.assert_array_equal(plans[0].replicated_rows, plans[1].replicated_rows)
    replayed = [np.concatenate([c.ids for c in p.trace.chunks(500, ids_only=True)]) for p in plans]
    np.testing.assert_array_equal(replayed[0], replayed[1])
    whole = [p.trace.materialize() for p in plans]
    np.testing.assert_array_equal(whole[0].labels, whole[1].labels)
    np.testing.assert_array_equal(whole[0].dense, whole[1].dense)


def test_released_top_rows_fill_the_budget_with_unsampled_rows() -> None:
    counts = np.array([0, 3, 1, 3, 3, 0, 5])
    two = fae_profile.released_top_rows(counts, 2).tolist()
    assert 6 in two and len(set(two) & {1, 3, 4}) == 1  # which tied row: numpy's argsort's say
    six = fae_profile.released_top_rows(counts, 6).tolist()
    assert set(six) >= {1, 2, 3, 4, 6} and len(six) == 6  # one never-sampled row is hot
    assert fae_profile.top_rows(counts, 6).tolist() == [1, 2, 3, 4, 6]


def test_released_profile_draws_int_of_the_percent() -> None:
    trace = skewed_trace(samples=999)
    counts, drawn = fae_profile.released_access_counts(trace, 5, seed=0)
    assert drawn == 49 and counts.sum() == 49 * 3  # int(0.05 * 999), three tables
    again, _ = fae_profile.released_access_counts(trace, 5, seed=0)
    other, _ = fae_profile.released_access_counts(trace, 5, seed=1)
    assert (counts == again).all() and not (counts == other).all()
    _, normative = fae_profile.sample_access_counts(trace, 0.05, np.random.default_rng(0))
    assert normative == 50  # round(0.05 * 999)


def test_released_variant_profiles_as_released_and_replays_as_fae() -> None:
    trace = skewed_trace(samples=4000)
    released = run(trace, cache_rows=200, workers=2, batch_size=16, hot_ratio=0.2,
                   variant="released")
    normative = run(trace, cache_rows=200, workers=2, batch_size=16, hot_ratio=0.2)
    # 5% of 4000 samples read few of the 4100 rows: the released set is filled to N = 820 with
    # rows never sampled; the normative set holds only sampled rows.
    assert released.info["trace"]["hot_rows"] == 820 > normative.info["trace"]["hot_rows"]
    assert released.info["trace"]["sampled_samples"] == 200


def test_released_variant_takes_whole_percents_only() -> None:
    with pytest.raises(ValueError, match="sampling_rate"):
        FAESpec(variant="released", sampling_rate=0.025)
    assert FAESpec(variant="released", sampling_rate=0.07).sampling_percent == 7
    assert FAESpec().variant == "normative" and FAESpec().label() == "fae"
