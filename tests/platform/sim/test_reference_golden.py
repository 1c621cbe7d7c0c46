"""Golden cases: tiny traces whose counts were worked out by hand from docs/semantics.md.

Each test runs the per-access reference and the fast simulator on the same input and asserts both
equal the hand-derived numbers written in its comment. Notation: ``(a, b)`` is one global batch of
single-field samples (row ids, table of 8 rows); ``w0: [0, 1]`` is worker 0's working set in
touch order; "D" marks a dirty copy, "P" a partial one, "out" an outdated one.

Random partition, seed 0 (asserted by ``test_random_permutations_used_below``): position p of
``default_rng([0, b]).permutation(B)`` holds the sample that goes to worker p // m.

- B = 2 (W=2, m=1): the permutation is [0, 1] for b = 0…4, so w0 gets sample 0, w1 sample 1.
- B = 4 (W=2, m=2): b0 [2, 0, 1, 3] -> w0 {s0, s2}, w1 {s1, s3}; b1 [3, 0, 2, 1] -> w0 {s0, s3},
  w1 {s1, s2}; b2 and b3 [2, 1, 0, 3] -> w0 {s1, s2}, w1 {s0, s3}.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from heraldbench.platform.data import InMemoryTrace, TraceSource
from heraldbench.platform.schedulers import create
from heraldbench.platform.sim import simulate
from heraldbench.platform.sim.reference import COUNT_KEYS, reference_simulate

ON_DEMAND_KINDS = ("herald", "herald-sync-only")


def run_both(trace: TraceSource, kind: str, **kw: Any) -> tuple[dict[str, int], dict[str, int]]:
    """Counts of (reference, fast simulator, with invariant checks) on the same input.

    ``kw``: workers, batch_size, cache_rows and optionally policy, consistency, lookahead, seed
    and (the Herald kinds) variant.
    """
    reference = reference_simulate(trace, kind, **kw)
    knobs = {"lookahead": kw.get("lookahead", 1)} if kind in ON_DEMAND_KINDS else {}
    if "variant" in kw:
        knobs["variant"] = kw["variant"]
    scheduler = create(
        kind, workers=kw["workers"], batch_size=kw["batch_size"], seed=kw.get("seed", 0), **knobs
    )
    result = simulate(
        trace,
        scheduler,
        cache_rows=kw["cache_rows"],
        policy=kw.get("policy", "lru"),
        consistency=kw.get("consistency", "strict"),
        check_invariants=True,
    )
    fast_counts = result.counts.as_dict()
    fast = {key: int(fast_counts[key]) for key in COUNT_KEYS}
    fast |= {"iterations": result.iterations, "samples_dropped": result.samples_dropped}
    return reference, fast


def expect(
    *,
    hits: int,
    miss: int,
    upull: int = 0,
    evict: int = 0,
    upush: int = 0,
    flush: int = 0,
    iterations: int,
    dropped: int = 0,
    fields: int = 1,
    batch: int,
) -> dict[str, int]:
    """The full count dict; lookups = hits + pulls and accesses = iterations × B × F."""
    return {
        "accesses": iterations * batch * fields,
        "lookups": hits + miss + upull,
        "hits": hits,
        "miss_pull": miss,
        "update_pull": upull,
        "evict_push": evict,
        "update_push": upush,
        "flush_push": flush,
        "allreduce": 0,
        "iterations": iterations,
        "samples_dropped": dropped,
    }


def check(trace: TraceSource, kind: str, expected: dict[str, int], **kw: Any) -> None:
    reference, fast = run_both(trace, kind, **kw)
    assert reference == expected, "reference differs from the hand-derived counts"
    assert fast == expected, "fast simulator differs from the hand-derived counts"


def trace1(*rows: int, size: int = 8) -> InMemoryTrace:
    """Single-field trace of the given row ids."""
    return InMemoryTrace.from_local_ids(np.array(rows).reshape(-1, 1), [size])


def test_random_permutations_used_below() -> None:
    perms = [np.random.default_rng([0, b]).permutation(4).tolist() for b in range(4)]
    assert perms == [[2, 0, 1, 3], [3, 0, 2, 1], [2, 1, 0, 3], [2, 1, 0, 3]]
    assert all(np.random.default_rng([0, b]).permutation(2).tolist() == [0, 1] for b in range(5))


# Batches (0,1) (1,0) (0,1) (0,2) + 1 dropped sample; W=2, m=1, K=2. Write-through throughout.
# b0: w0 0 miss, w1 1 miss. b1: w0 1 miss, w1 0 miss; writes outdate w1's 1 and w0's 0.
# b2: w0 0 upull, w1 1 upull. b3: w0 0 hit; w1 2 miss, cache {1,0,2} evicts 0 (last touch b1,
# clean, free). Every iteration pushes its 2 written rows: 8 update pushes.
G1 = trace1(0, 1, 1, 0, 0, 1, 0, 2, 3)


def test_naive_write_through_and_dropped_sample() -> None:
    expected = expect(hits=1, miss=5, upull=2, upush=8, iterations=4, dropped=1, batch=2)
    check(G1, "naive", expected, workers=2, batch_size=1, cache_rows=2)


# Same trace, on-demand(1). End b0: w1 reads 0 and w0 reads 1 in b1 -> both pushed (2).
# End b1: w1 reads 1, w0 reads 0 in b2 -> w0's 1 and w1's 0 pushed (2). End b2: w0's 0 D is
# read only by w0 in b3 and w1's 1 D by nobody -> kept. b3: w1 evicts 0 (clean). No b4 (the
# trailing sample is dropped), so nothing is pushed: flush w0's 0, w1's 1 and 2 = 3.
def test_sync_only_keeps_rows_dirty_and_flushes() -> None:
    expected = expect(hits=1, miss=5, upull=2, upush=4, flush=3, iterations=4, dropped=1, batch=2)
    check(G1, "herald-sync-only", expected, workers=2, batch_size=1, cache_rows=2)


# Batches (0,1) (2,3) (0,3); W=2, m=1, K=1. On-demand(1): nobody else reads anything next.
# b0: 2 misses, both D and kept. b1: w0 2 miss evicts 0 D (evict push), w1 3 miss evicts 1 D
# (evict push). b2: w0 0 miss evicts 2 D (evict push); w1 3 hit. Flush w0's 0, w1's 3 = 2.
# Naive on the same trace: write-through leaves nothing dirty, so evictions are free; 6 pushes.
G3 = trace1(0, 1, 2, 3, 0, 3)


def test_evict_push_of_dirty_rows() -> None:
    expected = expect(hits=1, miss=5, evict=3, flush=2, iterations=3, batch=2)
    check(G3, "herald-sync-only", expected, workers=2, batch_size=1, cache_rows=1)
    expected = expect(hits=1, miss=5, upush=6, iterations=3, batch=2)
    check(G3, "naive", expected, workers=2, batch_size=1, cache_rows=1)


# W=1, m=1, K=2, rows 0 0 1 2 0 1 3 (naive: 1 update push per iteration).
# LRU: b0 0 miss; b1 0 hit; b2 1 miss; b3 2 miss evicts 0 (last touch b1 < b2); b4 0 miss evicts
# 1; b5 1 miss evicts 2; b6 3 miss evicts 0 -> 1 hit, 6 misses.
# LFU: uses(0)=2 after b1; b3 2 miss evicts 1 (uses 1 < 2); b4 0 hit (uses 3); b5 1 miss evicts
# 2 (uses 1); b6 3 miss evicts 1 (uses 1) -> 2 hits, 5 misses.
G4 = trace1(0, 0, 1, 2, 0, 1, 3)


@pytest.mark.parametrize(("policy", "hits"), [("lru", 1), ("lfu", 2)])
def test_lru_and_lfu_eviction_order(policy: str, hits: int) -> None:
    expected = expect(hits=hits, miss=7 - hits, upush=7, iterations=7, batch=1)
    check(G4, "naive", expected, workers=1, batch_size=1, cache_rows=2, policy=policy)


# LFU, W=1, m=1, K=2, rows 0 0 1 1 2 0 2 1. b0 0 miss; b1 0 hit (uses 2); b2 1 miss; b3 1 hit
# (uses 2); b4 2 miss: tie on uses 2, older last touch (0 at b1) evicted; b5 0 miss evicts 2
# (uses 1); 0 re-inserted with uses 1. b6 2 miss evicts 0 (uses 1 < 2; without the reset it
# would evict 1). b7 1 hit. -> 3 hits, 5 misses.
def test_lfu_tie_break_and_count_reset() -> None:
    expected = expect(hits=3, miss=5, upush=8, iterations=8, batch=1)
    trace = trace1(0, 0, 1, 1, 2, 0, 2, 1)
    check(trace, "naive", expected, workers=1, batch_size=1, cache_rows=2, policy="lfu")


# LRU ties inside one iteration: position in touch order (field order). W=1, m=1, F=2, K=3,
# tables [4, 4] (field 2 is rows 4..7). Samples (1,4) (2,6) (3,4):
# b0 1 and 4 miss (touch positions 0, 1). b1 2 and 6 miss; 4 rows > 3 evicts 1 (b0, position 0),
# keeping 4. b2 3 miss (evicts 2), 4 hit. -> 1 hit, 5 misses; the wrong tie-break misses 4.
def test_lru_tie_break_by_touch_position() -> None:
    trace = InMemoryTrace.from_local_ids(np.array([[1, 0], [2, 2], [3, 0]]), [4, 4])
    expected = expect(hits=1, miss=5, upush=6, iterations=3, batch=1, fields=2)
    check(trace, "naive", expected, workers=1, batch_size=1, cache_rows=3)


# Batches (0,0) (0,0) (0,1); W=2, m=1, K=2: both workers co-write row 0 in b0 and b1.
# naive strict: b0 2 misses, both P, pushed (2); b1 both upull, P again, pushed (2); b2 w0 upull,
# w1 1 miss (2 pushes) -> 0 hits, 3 misses, 3 upulls, 6 pushes.
# naive optimistic: co-writers stay valid: b1 2 hits, b2 w0 hit -> 3 hits, 3 misses, 6 pushes.
# sync-only strict: end b0, 0 read by both in b1: both P pushed (2). End b1, only w0 reads 0 in b2:
# w0's P is pushed because it is partial (the reader may be v itself), w1's because w0 is another
# reader (2). b2 writes 0 (w0) and 1 (w1), no b3: flush 2. -> 4 pushes, flush 2.
# sync-only optimistic: end b0 both valid D, each read by the other: 2 pushes. End b1 only w0
# reads 0: w0's valid D kept, w1's pushed (1). b2 w0 hit. -> 3 hits, 3 pushes, flush 2.
G5 = trace1(0, 0, 0, 0, 0, 1)


@pytest.mark.parametrize(
    ("kind", "consistency", "hits", "upull", "upush", "flush"),
    [
        ("naive", "strict", 0, 3, 6, 0),
        ("naive", "optimistic", 3, 0, 6, 0),
        ("herald-sync-only", "strict", 0, 3, 4, 2),
        ("herald-sync-only", "optimistic", 3, 0, 3, 2),
    ],
)
def test_co_writers_strict_and_optimistic(
    kind: str, consistency: str, hits: int, upull: int, upush: int, flush: int
) -> None:
    expected = expect(
        hits=hits, miss=3, upull=upull, upush=upush, flush=flush, iterations=3, batch=2
    )
    check(G5, kind, expected, workers=2, batch_size=1, cache_rows=2, consistency=consistency)


# Batches (0,1) (0,2) (0,0); W=2, m=1, K=2, herald-sync-only.
# L=1: end b0, 0 is read only by w0 in b1 -> kept. b1 w0 0 hit (re-written), w1 2 miss. End b1,
# w1 reads 0 in b2 -> w0's 0 pushed (1). b2 w0 0 hit; w1 0 miss evicts 1 D (evict push); 0 is
# co-written (P at both). Flush w0's 0, w1's 0 and 2 = 3.
# L=2: end b0 already sees w1 read 0 in b2 -> w0's 0 pushed early, and again at end b1 after b1
# re-dirtied it (2 pushes). L=3 equals L=2 (there is no b3).
@pytest.mark.parametrize(("lookahead", "upush"), [(1, 1), (2, 2), (3, 2)])
def test_lookahead_pushes_earlier(lookahead: int, upush: int) -> None:
    expected = expect(hits=2, miss=4, evict=1, upush=upush, flush=3, iterations=3, batch=2)
    trace = trace1(0, 1, 0, 2, 0, 0)
    kw = {"workers": 2, "batch_size": 1, "cache_rows": 2, "lookahead": lookahead}
    check(trace, "herald-sync-only", expected, **kw)


# Batches [0,1,2,3] [2,0,3,1] [0,2,4,4] [4,0,2,5] + 3 dropped; W=2, m=2, K=2.
# Location-aware (scan order w0,w1 on even b, w1,w0 on odd b; strictly larger score wins):
# b0 all scores 0: s0,s1 -> w0 [0,1]; s2,s3 -> w1 [2,3]; 4 misses.
# b1 (w1 first): s0=2 -> w1 (score 1), s1=0 -> w0, s2=3 -> w1, s3=1 -> w0: 4 hits.
# b2: s0=0 -> w0, s1=2 -> w1, s2=4 ties 0/0 -> w0, s3=4 -> w1 (w0 full): w0 [0,4], w1 [2,4].
#   w0: 0 hit, 4 miss evicts 1 D; w1: 2 hit, 4 miss evicts 3 D (2 evict pushes). 4 co-written: P.
# b3 (w1 first): s0=4 scores 0/0 -> w1, s1=0 -> w0, s2=2 -> w1, s3=5 -> w0: w0 [0,5], w1 [4,2].
#   w0: 0 hit, 5 miss evicts 4 (clean by then); w1: 4 upull, 2 hit.
# herald (on-demand 1): end b0 and b1 nobody reads another's row next. End b2: w0's P 4 is read by
# w1, w1's P 4 by itself -> 2 pushes. End b3 (last): flush w0's 0, 5 and w1's 4, 2 = 4.
# herald-partition-only: same partitions and reads, write-through: 4 pushes per iteration, no
# dirty evictions, no flush.
G7 = trace1(0, 1, 2, 3, 2, 0, 3, 1, 0, 2, 4, 4, 4, 0, 2, 5, 6, 6, 6)


def test_herald_location_aware_with_rotation() -> None:
    expected = expect(
        hits=8, miss=7, upull=1, evict=2, upush=2, flush=4, iterations=4, dropped=3, batch=4
    )
    check(G7, "herald", expected, workers=2, batch_size=2, cache_rows=2)


def test_herald_partition_only() -> None:
    expected = expect(hits=8, miss=7, upull=1, upush=16, iterations=4, dropped=3, batch=4)
    check(G7, "herald-partition-only", expected, workers=2, batch_size=2, cache_rows=2)


# Naive on G7 (seed 0 partitions in the module docstring).
# b0 w0 [0,2], w1 [1,3]: 4 misses. b1 w0 {s0,s3} [2,1]: 2 hit, 1 miss evicts 0; w1 {s1,s2} [0,3]:
# 0 miss evicts 1, 3 hit. b2 w0 {s1,s2} [2,4]: hit, miss (evicts 1); w1 {s0,s3} [0,4]: hit, miss
# (evicts 3); 4 co-written. b3 w0 [0,2]: 0 miss (evicts 4), 2 hit; w1 [4,5]: 4 upull, 5 miss.
# -> 5 hits, 10 misses, 1 upull, 16 pushes. (Sending sample i to worker perm[i] // m instead
# gives 3 hits and 12 misses.)
def test_naive_random_partition_convention() -> None:
    expected = expect(hits=5, miss=10, upull=1, upush=16, iterations=4, dropped=3, batch=4)
    check(G7, "naive", expected, workers=2, batch_size=2, cache_rows=2)


# Fewer samples than one global batch: no iteration, everything dropped.
@pytest.mark.parametrize("kind", ["naive", "herald", "herald-sync-only", "herald-partition-only"])
def test_trace_shorter_than_a_batch(kind: str) -> None:
    expected = expect(hits=0, miss=0, iterations=0, dropped=3, batch=4)
    check(trace1(0, 1, 2), kind, expected, workers=2, batch_size=2, cache_rows=2)


@pytest.mark.parametrize(
    "kw",
    [
        {"cache_rows": 3},  # below m × F = 2 × 2
        {"cache_rows": 8, "policy": "fifo"},
        {"cache_rows": 8, "consistency": "eventual"},
        {"cache_rows": 8, "lookahead": 0},
    ],
)
def test_reference_rejects_bad_arguments(kw: dict[str, Any]) -> None:
    trace = InMemoryTrace.from_local_ids(np.zeros((4, 2), np.int64), [4, 4])
    with pytest.raises(ValueError):
        reference_simulate(trace, "herald", workers=2, batch_size=2, **kw)


def test_reference_rejects_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        reference_simulate(trace1(0, 1), "fae", workers=1, batch_size=1, cache_rows=1)
