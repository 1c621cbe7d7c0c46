"""herald-plus: each of its three mechanisms does what it claims, against Herald itself."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.data import InMemoryTrace
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.schedulers import CacheView, create
from heraldbench.platform.sim import simulate


def _skewed(samples: int = 4000, seed: int = 0) -> InMemoryTrace:
    rng = np.random.default_rng(seed)
    sizes = [50, 200, 1000]
    local = np.stack([np.minimum(rng.zipf(1.3, samples) - 1, s - 1) for s in sizes], axis=1)
    return InMemoryTrace.from_local_ids(local, sizes)


def _run(trace, kind: str, cache_rows: int = 60, **knobs):
    return simulate(trace, create(kind, workers=4, batch_size=8, seed=1, **knobs),
                    cache_rows=cache_rows, check_invariants=True, record_partitions=True)


def test_with_every_mechanism_off_only_the_tie_break_differs_from_herald() -> None:
    # Ties go to the least loaded worker instead of the first in rotation: samples that match no
    # cache spread out instead of filling one worker, which leaves room for affinity later on.
    trace = _skewed()
    plain = _run(trace, "herald-plus", affinity=0, replacement_window=0, direct_transfer=False)
    herald = _run(trace, "herald")
    assert plain.counts.overall <= herald.counts.overall
    assert (plain.partitions != herald.partitions).any()


def test_direct_transfer_replaces_whole_copy_pushes_and_keeps_pulls() -> None:
    trace = _skewed()
    via_ps = _run(trace, "herald-plus", direct_transfer=False).counts
    direct = _run(trace, "herald-plus", direct_transfer=True).counts
    assert (direct.miss_pull, direct.update_pull) == (via_ps.miss_pull, via_ps.update_pull)
    assert direct.update_push < via_ps.update_push
    assert direct.overall < via_ps.overall


def test_affinity_puts_the_readers_of_a_rare_row_together() -> None:
    # Batch of 8 samples over 2 workers (m=4); row 100 of table 1 is shared by samples 0, 3, 5 and
    # cached nowhere. Herald fills worker 0 with samples 0-3 (all scores tie) and splits them;
    # herald-plus breaks ties by load and keeps the three together.
    ids = np.array([[i, 200 + i] for i in range(8)], dtype=np.int32)
    ids[[0, 3, 5], 1] = 100
    valid = np.zeros(400, np.uint8)
    view = CacheView(valid=valid, cached=valid)
    herald = create("herald", workers=2, batch_size=4).partition(ids, view, 0)
    plus = create("herald-plus", workers=2, batch_size=4).partition(ids, view, 0)
    assert len(set(plus[[0, 3, 5]])) == 1
    assert len(set(herald[[0, 3, 5]])) == 2
    assert np.bincount(plus, minlength=2).tolist() == [4, 4]


def _misses_of_one_worker(rows: list[int], window: int) -> int:
    """Miss pulls of one worker with a 2-row cache reading ``rows``, one per iteration."""
    trace = InMemoryTrace.from_local_ids(np.array(rows)[:, None], [max(rows) + 1])
    sched = create("herald-plus", workers=1, batch_size=1, replacement_window=window,
                   direct_transfer=False)
    return simulate(trace, sched, cache_rows=2, check_invariants=True).counts.miss_pull


def test_replacement_window_keeps_soon_needed_rows() -> None:
    # Rows per iteration: 0, 1, 2, 0. LRU evicts 0 when 2 comes in and misses it again; with a
    # 1-batch window, 0 (read next) is passed over and 1 evicted.
    assert _misses_of_one_worker([0, 1, 2, 0], window=0) == 4
    assert _misses_of_one_worker([0, 1, 2, 0], window=1) == 3


def test_replacement_window_reaches_exactly_window_batches_ahead() -> None:
    # Rows per iteration: 0, 1, 2, 3, 0. When 2 comes in, LRU's victim is 0, read again two
    # batches later: a 2-batch window keeps it (and again when 3 comes in), a 1-batch window
    # does not see that far.
    assert _misses_of_one_worker([0, 1, 2, 3, 0], window=1) == 5
    assert _misses_of_one_worker([0, 1, 2, 3, 0], window=2) == 4


def test_it_beats_herald_on_a_skewed_trace() -> None:
    trace = _skewed(seed=4)
    plus = _run(trace, "herald-plus").counts
    herald = _run(trace, "herald").counts
    assert plus.overall < herald.overall


def test_direct_transfer_needs_lookahead_one() -> None:
    with pytest.raises(SpecError, match="lookahead 1, got lookahead 2"):
        create("herald-plus", workers=2, batch_size=2, lookahead=2)
    assert create("herald-plus", workers=2, batch_size=2, lookahead=2,
                  direct_transfer=False).sync_policy.window == 2
