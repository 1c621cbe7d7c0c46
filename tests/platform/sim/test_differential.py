"""Differential tests: the fast simulator's counts equal the per-access reference's, exactly.

Hypothesis draws small traces over tiny tables (rows repeat a lot, so co-writers, outdated copies,
dirty evictions and pushes all happen), every kind, policy, consistency and lookahead 1-3, with the
fast simulator's invariant checks on. A seeded, larger, skewed trace complements it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heraldbench.platform.data import InMemoryTrace
from tests.platform.sim.test_reference_golden import run_both
from tests.platform.strategies import (
    small_multi_hot_simulations,
    small_ragged_simulations,
    small_simulations,
)

KINDS = ("naive", "herald", "herald-sync-only", "herald-partition-only")


@st.composite
def cases(draw: st.DrawFn) -> tuple[InMemoryTrace, str, dict[str, Any]]:
    """A random (trace, kind, simulation arguments) triple."""
    trace, kw = draw(small_simulations())
    kw["consistency"] = draw(st.sampled_from(["strict", "optimistic"]))
    return trace, draw(st.sampled_from(KINDS)), kw


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_fast_simulator_matches_reference(case: tuple[InMemoryTrace, str, dict[str, Any]]) -> None:
    trace, kind, kw = case
    reference, fast = run_both(trace, kind, **kw)
    assert fast == reference


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_multi_hot_simulations(), st.sampled_from(KINDS),
       st.sampled_from(["strict", "optimistic"]))
def test_fast_simulator_matches_reference_with_many_ids_a_table(
    case: tuple[InMemoryTrace, dict[str, Any]], kind: str, consistency: str,
) -> None:
    """Multi-hot samples (a row read twice by one sample included): a sample's working set is
    its distinct ids, its accesses all of them, in the fast simulator as in the reference."""
    trace, kw = case
    reference, fast = run_both(trace, kind, consistency=consistency, **kw)
    assert fast == reference


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_ragged_simulations(), st.sampled_from(KINDS),
       st.sampled_from(["strict", "optimistic"]))
def test_fast_simulator_matches_reference_on_ragged_tables(
    case: tuple[InMemoryTrace, dict[str, Any]], kind: str, consistency: str,
) -> None:
    """Ragged tables: the fast simulator reads padded columns and the lengths, the reference
    only each sample's ids as it reads them; accesses, scores and every count agree."""
    trace, kw = case
    reference, fast = run_both(trace, kind, consistency=consistency, **kw)
    assert fast == reference


@st.composite
def released_cases(draw: st.DrawFn) -> tuple[InMemoryTrace, str, dict[str, Any]]:
    """A random (trace, Herald kind, simulation arguments) triple under the released variant."""
    trace, kw = draw(small_simulations())
    kw["consistency"] = draw(st.sampled_from(["strict", "optimistic"]))  # the variant overrides
    kw["variant"] = "released"
    return trace, draw(st.sampled_from(KINDS[1:])), kw


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(released_cases())
def test_released_variant_matches_reference(
    case: tuple[InMemoryTrace, str, dict[str, Any]],
) -> None:
    """Herald's released cache rules (ascending touch order, eviction on insert, a pushed row
    read by its pusher re-pulled; LRU, optimistic) agree with the reference's literal reading
    of them, count for count."""
    trace, kind, kw = case
    reference, fast = run_both(trace, kind, **kw)
    assert fast == reference


def skewed_trace(samples: int, sizes: list[int], seed: int) -> InMemoryTrace:
    """Zipf-like local ids (a few hot rows per table), as in real click logs."""
    rng = np.random.default_rng(seed)
    columns = [np.minimum(rng.zipf(1.3, samples) - 1, size - 1) for size in sizes]
    return InMemoryTrace.from_local_ids(np.stack(columns, axis=1), sizes)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("policy", "consistency", "lookahead"),
    [("lru", "strict", 1), ("lfu", "optimistic", 2)],
)
def test_fast_simulator_matches_reference_on_a_larger_trace(
    kind: str, policy: str, consistency: str, lookahead: int
) -> None:
    trace = skewed_trace(2_000, [40, 300, 1_000], seed=7)
    kw = {
        "workers": 4,
        "batch_size": 8,
        "cache_rows": 60,
        "policy": policy,
        "consistency": consistency,
        "lookahead": lookahead,
        "seed": 3,
    }
    reference, fast = run_both(trace, kind, **kw)
    assert reference["iterations"] == 62 and reference["samples_dropped"] == 16
    assert reference["evict_push"] + reference["update_pull"] > 0  # the case exercises both paths
    assert fast == reference


@pytest.mark.parametrize("kind", KINDS[1:])
def test_released_variant_matches_reference_on_a_larger_trace(kind: str) -> None:
    trace = skewed_trace(2_000, [40, 300, 1_000], seed=7)
    kw = {"workers": 4, "batch_size": 8, "cache_rows": 60, "seed": 3, "variant": "released"}
    reference, fast = run_both(trace, kind, **kw)
    normative, _ = run_both(trace, kind, **{**kw, "variant": "normative"})
    assert reference != normative  # the rules matter on this trace (evictions, shared rows)
    assert fast == reference
