"""Tests of the communication lower bound of a fixed partition (heraldbench.platform.bounds).

(a) hand-worked cases, (b) the literal definitions and an exhaustive search over every eviction
choice on tiny random traces, (c) the bound never exceeds any strict scheduler's counts, and
(d) with a cache holding every row it is met exactly: pulls by every scheduler, pushes and flush
by the on-demand (lookahead 1) schedulers.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heraldbench.platform.bounds import LowerBound, lower_bound
from heraldbench.platform.data import InMemoryTrace
from heraldbench.platform.exceptions import CapacityError, SpecError
from heraldbench.platform.metrics import Counts
from heraldbench.platform.schedulers import create
from heraldbench.platform.sim import simulate
from tests.platform.strategies import small_simulations

KINDS = ("naive", "herald", "herald-sync-only", "herald-partition-only")
ON_DEMAND = ("herald", "herald-sync-only")
A, B, C, D = 0, 1, 2, 3  # local ids of one table


def one_table(ids: list[int], rows: int = 4) -> InMemoryTrace:
    return InMemoryTrace.from_local_ids(np.array(ids)[:, None], [rows])


# ---- (a) hand-worked cases -------------------------------------------------------------------
# W = 2, m = 1, F = 1; partition [0, 1]: each iteration's first sample goes to worker 0.
#   iteration   0    1    2    3    4
#   worker 0    a    a    a    c    a
#   worker 1    b    a    b    b    c
# Readers per row and iteration: a: 0{0} 1{0,1} 2{0} 4{0};  b: 0{1} 2{1} 3{1};  c: 3{0} 4{1}.
# Pushes (look at the row's next iteration): a@0 lone 0, next {0,1} holds 1 -> 1; a@1 co-written
# by 0 and 1, a read follows -> 2; a@2 lone 0, next {0} -> 0; b@0, b@2 lone 1, next {1} -> 0;
# c@3 lone 0, next {1} -> 1. pushes = 4. Flush: the last iterations a@4 {0}, b@3 {1}, c@4 {1}
# -> 3. Renamed streams: worker 0 reads a, a (same key: a@0 was 0's alone), a' (a@1 was
# co-written), c, a' (a@2 was 0's alone); worker 1 reads b, a, b, b, c, all one key per row.
# Compulsory: 0 {a, c}, 1 {b, a, c} = 5; coherence: 0's a' = 1.
# MIN with K = 1: worker 0 misses a, a', c, a' = 4; worker 1 misses b, a, b, c = 4 -> 8.
# K = 2: worker 0 keeps a' and c -> 3; worker 1 misses b, a, c -> 3; 6 = 5 + 1, no capacity miss.
TWO_WORKERS = [A, B, A, A, A, B, C, B, A, C]


@pytest.mark.parametrize(("cache_rows", "pulls"), [(1, 8), (2, 6), (3, 6)])
def test_two_workers_by_hand(cache_rows: int, pulls: int) -> None:
    parts = np.tile([0, 1], (5, 1))
    lb = lower_bound(one_table(TWO_WORKERS), parts, workers=2, batch_size=1,
                     cache_rows=cache_rows)
    assert lb == LowerBound(pulls=pulls, pushes=4, flush=3, compulsory_pulls=5, coherence_pulls=1)
    assert lb.capacity_pulls == pulls - 6


def test_swapping_the_workers_gives_the_same_bound() -> None:
    parts = np.tile([1, 0], (5, 1))
    lb = lower_bound(one_table(TWO_WORKERS), parts, workers=2, batch_size=1, cache_rows=1)
    assert (lb.pulls, lb.pushes, lb.flush) == (8, 4, 3)


def test_min_looks_furthest_ahead_where_lru_does_not() -> None:
    # One worker, K = 2, reads a b c a b c. LRU misses all 6. MIN: a, b miss; c evicts b (next
    # use 4, a's is 3); a hits; b evicts a (never used again) ; c hits -> 4.
    trace = one_table([A, B, C, A, B, C])
    parts = np.zeros((6, 1), np.int8)
    lb = lower_bound(trace, parts, workers=1, batch_size=1, cache_rows=2)
    assert (lb.pulls, lb.compulsory_pulls, lb.coherence_pulls) == (4, 3, 0)
    assert (lb.pushes, lb.flush) == (0, 3)  # one worker never needs to push; it flushes a, b, c
    lru = simulate(trace, create("naive", workers=1, batch_size=1), cache_rows=2)
    assert lru.counts.pull == 6


def test_rows_of_the_current_iteration_are_never_evicted() -> None:
    # One worker, m = 2, K = 2, sets {a,b} {a,c} {b,d} {a}. Serialised per access, MIN would
    # evict a right after reading it at iteration 1 (a's next use, 3, is further than b's, 2)
    # and miss 5 times. Batch-granular, a must stay: iteration 1 evicts b, iteration 2 needs
    # b and d (both miss, a and c leave), iteration 3 misses a: 2 + 1 + 2 + 1 = 6.
    trace = one_table([A, B, A, C, B, D, A, A])
    parts = np.zeros((4, 2), np.int8)
    lb = lower_bound(trace, parts, workers=1, batch_size=2, cache_rows=2)
    assert lb.pulls == 6


def test_gap_is_the_ratio_to_the_bound_and_none_over_zero() -> None:
    lb = LowerBound(pulls=10, pushes=0, flush=2, compulsory_pulls=6, coherence_pulls=3)
    gap = lb.gap(Counts(miss_pull=12, update_pull=3, update_push=5))
    assert gap == {"pull": 1.5, "push": None, "overall": 2.0}


def test_invalid_inputs_are_refused() -> None:
    trace = one_table(TWO_WORKERS)
    with pytest.raises(SpecError, match="shape"):
        lower_bound(trace, np.zeros((5, 3), np.int8), workers=2, batch_size=1, cache_rows=2)
    with pytest.raises(SpecError, match="loads"):
        lower_bound(trace, np.zeros((5, 2), np.int8), workers=2, batch_size=1, cache_rows=2)
    with pytest.raises(SpecError, match="iterations"):
        lower_bound(trace, np.tile([0, 1], (6, 1)), workers=2, batch_size=1, cache_rows=2)
    with pytest.raises(CapacityError):
        lower_bound(one_table([A, B]), np.zeros((1, 2), np.int8), workers=1, batch_size=2,
                    cache_rows=1)


# ---- (b) the literal definitions, and exhaustive search over eviction choices -----------------
def working_sets(trace: InMemoryTrace, parts: np.ndarray, workers: int) -> list[list[set[int]]]:
    """U_w(b) for every iteration b and worker w."""
    global_batch = parts.shape[1]
    sets: list[list[set[int]]] = []
    for b, row in enumerate(parts):
        ids = trace.ids[b * global_batch : (b + 1) * global_batch]
        sets.append([set(ids[row == w].ravel().tolist()) for w in range(workers)])
    return sets


def readable_copies(sets: list[list[set[int]]], workers: int) -> list[list[set[int]]]:
    """Per (b, w), the rows whose copy at w would be valid at b's reads if it were cached, by
    versions: a read takes the row's version; a lone writer's copy gets the new version, a
    co-writer's copy none (strict consistency)."""
    row_version: dict[int, int] = {}
    copy_version: list[dict[int, int]] = [{} for _ in range(workers)]
    valid = []
    for per_worker in sets:
        valid.append([{r for r in s if copy_version[w].get(r) == row_version.get(r, 0)}
                      for w, s in enumerate(per_worker)])
        for w, s in enumerate(per_worker):
            for r in s:
                copy_version[w][r] = row_version.get(r, 0)
        for r in set().union(*per_worker):
            writers = [w for w in range(workers) if r in per_worker[w]]
            row_version[r] = row_version.get(r, 0) + 1
            for w in writers:
                copy_version[w][r] = row_version[r] if len(writers) == 1 else -1
    return valid


def optimal_pulls(sets: list[set[int]], valid: list[set[int]], capacity: int) -> int:
    """Fewest pulls of one worker over every choice of which rows to keep after each read."""

    @lru_cache(maxsize=None)
    def best(b: int, cache: frozenset[int]) -> int:
        if b == len(sets):
            return 0
        need = sets[b]
        pulls = len(need - (cache & valid[b]))
        others = sorted(cache - need)
        room = capacity - len(need)
        return pulls + min(
            best(b + 1, frozenset(need) | frozenset(kept))
            for k in range(min(room, len(others)) + 1)
            for kept in itertools.combinations(others, k)
        )

    return best(0, frozenset())


def literal_pushes(sets: list[list[set[int]]], workers: int) -> tuple[int, int]:
    """(pushes, flush) straight from the definitions, one (b, w, r) write at a time."""
    pushes = flush = 0
    accesses = [(b, w, r) for b, s in enumerate(sets) for w in range(workers) for r in s[w]]
    for b, w, r in accesses:
        own_next = min((b2 for b2, w2, r2 in accesses if w2 == w and r2 == r and b2 > b),
                       default=len(sets))
        cowritten = any(r in sets[b][v] for v in range(workers) if v != w)
        if cowritten:
            needed = any(b2 > b and r2 == r for b2, _, r2 in accesses)
        else:
            needed = any(b < b2 <= own_next and w2 != w and r2 == r for b2, w2, r2 in accesses)
        pushes += needed
        flush += own_next == len(sets) and not needed
    return pushes, flush


@st.composite
def partitioned_traces(draw: st.DrawFn) -> tuple[InMemoryTrace, np.ndarray, int, int, int]:
    """A tiny trace, a random balanced partition of it, W, m and K."""
    workers = draw(st.integers(1, 3))
    batch_size = draw(st.integers(1, 2))
    fields = draw(st.integers(1, 2))
    sizes = draw(st.lists(st.integers(1, 4), min_size=fields, max_size=fields))
    iterations = draw(st.integers(1, 6))
    global_batch = workers * batch_size
    sample = st.tuples(*(st.integers(0, size - 1) for size in sizes))
    rows = draw(st.lists(sample, min_size=iterations * global_batch,
                         max_size=iterations * global_batch))
    trace = InMemoryTrace.from_local_ids(np.array(rows, dtype=np.int64), sizes)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    workers_of = np.repeat(np.arange(workers), batch_size)
    parts = np.stack([rng.permutation(workers_of) for _ in range(iterations)]).astype(np.int8)
    least = batch_size * fields
    return trace, parts, workers, batch_size, draw(st.integers(least, least + 2))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(partitioned_traces())
def test_bound_is_the_optimum_of_an_exhaustive_search(case) -> None:
    trace, parts, workers, batch_size, cache_rows = case
    lb = lower_bound(trace, parts, workers=workers, batch_size=batch_size, cache_rows=cache_rows)
    sets = working_sets(trace, parts, workers)
    valid = readable_copies(sets, workers)
    optimum = sum(
        optimal_pulls([s[w] for s in sets], [v[w] for v in valid], cache_rows)
        for w in range(workers)
    )
    assert lb.pulls == optimum
    assert (lb.pushes, lb.flush) == literal_pushes(sets, workers)
    first_reads = {(w, r) for s in sets for w in range(workers) for r in s[w]}
    assert lb.compulsory_pulls == len(first_reads)
    stale = sum(len(s[w] - v[w]) for s, v in zip(sets, valid) for w in range(workers))
    assert lb.compulsory_pulls + lb.coherence_pulls == stale  # every stale read is a new key


# ---- (c) no strict scheduler beats the bound; (d) an unbounded cache meets it ------------------
def run(trace: InMemoryTrace, kind: str, workers: int, batch_size: int, cache_rows: int,
        *, seed: int = 0, lookahead: int = 1, policy: str = "lru"):
    knobs = {"lookahead": lookahead} if kind in ON_DEMAND else {}
    scheduler = create(kind, workers=workers, batch_size=batch_size, seed=seed, **knobs)
    result = simulate(trace, scheduler, cache_rows=cache_rows, policy=policy,
                      record_partitions=True)
    lb = lower_bound(trace, result.partitions, workers=workers, batch_size=batch_size,
                     cache_rows=cache_rows)
    return result.counts, lb


def assert_within_bound(counts: Counts, lb: LowerBound) -> None:
    assert lb.compulsory_pulls <= counts.miss_pull  # a first read is never cached
    assert counts.update_pull <= lb.coherence_pulls  # an outdated copy is a new key
    assert lb.pulls <= counts.pull
    # Each counted push precedes a read that needs it, in windows disjoint per (w, r), so evict
    # and update pushes cover it; the flush may have gone out early as a push, hence the sum.
    assert lb.pushes <= counts.push
    assert lb.pushes + lb.flush <= counts.push + counts.flush_push


simulations = small_simulations


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(simulations())
def test_no_strict_scheduler_beats_the_bound(case) -> None:
    trace, kw = case
    for kind in KINDS:
        counts, lb = run(trace, kind, **kw)
        assert_within_bound(counts, lb)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(simulations())
def test_an_unbounded_cache_meets_the_bound(case) -> None:
    trace, kw = case
    kw["cache_rows"] = max(trace.layout.total_rows, kw["batch_size"] * trace.layout.num_tables)
    kw["lookahead"] = 1
    for kind in KINDS:
        counts, lb = run(trace, kind, **kw)
        # Only compulsory and coherence misses remain, and every scheduler pays exactly those.
        assert (counts.miss_pull, counts.update_pull) == (lb.compulsory_pulls, lb.coherence_pulls)
        assert counts.pull == lb.pulls
        if kind in ON_DEMAND:
            # On-demand at lookahead 1 pushes a dirty copy exactly when the next reader needs it.
            assert counts.evict_push == 0
            assert (counts.update_push, counts.flush_push) == (lb.pushes, lb.flush)


def skewed_trace(samples: int, sizes: list[int], seed: int) -> InMemoryTrace:
    """Zipf-like local ids (a few hot rows per table), as in real click logs."""
    rng = np.random.default_rng(seed)
    columns = [np.minimum(rng.zipf(1.3, samples) - 1, size - 1) for size in sizes]
    return InMemoryTrace.from_local_ids(np.stack(columns, axis=1), sizes)


@pytest.mark.parametrize("kind", KINDS)
def test_bound_on_a_larger_skewed_trace(kind: str) -> None:
    trace = skewed_trace(4_000, [40, 300, 1_000], seed=5)
    counts, lb = run(trace, kind, workers=4, batch_size=16, cache_rows=48, seed=2)
    assert_within_bound(counts, lb)
    assert lb.capacity_pulls > 0  # the case exercises MIN's evictions
    unbounded, exact = run(trace, kind, workers=4, batch_size=16, cache_rows=1_340, seed=2)
    assert unbounded.pull == exact.pulls
    assert exact.capacity_pulls == 0


def test_capacity_pulls_vanish_when_the_cache_holds_every_row() -> None:
    trace = skewed_trace(4_000, [40, 300, 1_000], seed=5)
    scheduler = create("naive", workers=4, batch_size=16, seed=2)
    parts = simulate(trace, scheduler, cache_rows=48, record_partitions=True).partitions
    bounds = [lower_bound(trace, parts, workers=4, batch_size=16, cache_rows=k)
              for k in (48, 60, 1_340)]
    assert bounds[0].pulls > bounds[1].pulls == bounds[2].pulls
    assert bounds[2].pulls == bounds[2].compulsory_pulls + bounds[2].coherence_pulls
    assert {(b.pushes, b.flush, b.compulsory_pulls) for b in bounds} == {
        (bounds[0].pushes, bounds[0].flush, bounds[0].compulsory_pulls)
    }  # the cache size changes only the capacity misses
