"""How a trace is read: which frequent tuples are head tuples (drawn independently of time)."""

from __future__ import annotations

import numpy as np

from heraldbench.platform.data.workload._structure import head_tuples

N = 20_000


def _trace_with_sessions(rng) -> np.ndarray:
    """Tuple 1 drawn at random at 1% of the samples; tuple 2 as often, but in sessions of five
    samples within 20 (a frequent user coming back over the whole trace); the rest all new."""
    tuples = np.arange(3, N + 3)
    tuples[rng.random(N) < 0.01] = 1
    for start in rng.choice(N - 20, 40, replace=False):
        tuples[start + np.sort(rng.choice(20, 5, replace=False))] = 2
    return tuples


def test_a_frequent_tuple_seen_in_sessions_is_not_a_head_tuple() -> None:
    rng = np.random.default_rng(0)
    tuples = _trace_with_sessions(rng)
    counts = np.bincount(tuples)
    assert counts[1] > 150 and counts[2] > 150  # both frequent, and both spread over the trace
    heads = head_tuples(tuples, head_min=8)
    assert heads[1] and not heads[2]
    assert not heads[3:].any()


def test_a_head_tuple_drawn_at_random_is_kept_at_any_frequency() -> None:
    """Independent draws come back within a short distance by chance, the more often the more
    frequent they are; the burst test allows for that."""
    rng = np.random.default_rng(1)
    for share in (0.002, 0.05, 0.3):
        tuples = np.where(rng.random(N) < share, 1, np.arange(2, N + 2))
        assert head_tuples(tuples, head_min=8)[1], share
