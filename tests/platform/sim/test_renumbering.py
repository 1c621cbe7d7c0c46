"""The simulator's first-seen renumbering is invisible in what it reports, for every scheduler."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.data import InMemoryTrace
from heraldbench.platform.schedulers import create, registered
from heraldbench.platform.sim import simulate


def _scattered_trace(samples: int = 960, seed: int = 5) -> InMemoryTrace:
    """A skewed trace whose popular rows have large, scattered numbers (as the generator's do)."""
    rng = np.random.default_rng(seed)
    sizes = [9, 60, 500]
    ranks = [np.minimum(rng.zipf(1.3, samples) - 1, s - 1) for s in sizes]
    local = np.stack([rng.permutation(s)[r] for s, r in zip(sizes, ranks, strict=True)], axis=1)
    return InMemoryTrace.from_local_ids(local, sizes)


@pytest.mark.parametrize("kind", sorted(registered()))
@pytest.mark.parametrize("policy", ["lru", "lfu"])
def test_counts_do_not_depend_on_how_rows_are_numbered(kind: str, policy: str) -> None:
    trace = _scattered_trace()
    results = [
        simulate(trace, create(kind, workers=4, batch_size=8, seed=2), cache_rows=100,
                 policy=policy, check_invariants=True, renumber_rows=renumber)
        for renumber in (False, True)
    ]  # fmt: skip
    plain, renumbered = (r.counts.as_dict() for r in results)
    assert renumbered == plain
    for name, series in results[0].series.items():
        np.testing.assert_array_equal(results[1].series[name], series, err_msg=name)


def test_fae_hot_rows_are_invalidated_under_their_new_numbers() -> None:
    """FAE names its hot rows on the original trace; every switch back to a cold phase must
    outdate those rows' cached copies under the numbers the simulator gave them."""
    trace = _scattered_trace(samples=1920)
    results = [
        simulate(trace, create("fae", workers=4, batch_size=8, seed=2, hot_ratio=0.2,
                               switch_period=1), cache_rows=100, check_invariants=True,
                 renumber_rows=renumber)
        for renumber in (False, True)
    ]  # fmt: skip
    described = results[1].info["trace"]
    assert described["phases"] > 4 and described["hot_batches"] > 2
    assert results[1].counts.as_dict() == results[0].counts.as_dict()
    for name, series in results[0].series.items():
        np.testing.assert_array_equal(results[1].series[name], series, err_msg=name)
