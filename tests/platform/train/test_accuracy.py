"""Accuracy preservation: strict schedulers train exactly the synchronous model.

Same global batches, same seed: Herald's, naive's and every strict scheduler's trained parameters
(dense and embedding tables) equal each other and the plain one-table PyTorch model within
floating-point tolerance. HET with a large bound and FAE (reordered batches, replicated rows)
train a different model, and the platform reports by how much AUC and log loss move.
"""

from __future__ import annotations

import pytest
import torch

from heraldbench.platform.train import TrainOutcome, train_plain
from tests.platform.train._tiny import BATCH, DIM, SETTINGS, WORKERS, tiny_split, train_tiny

#: float32 rounding of differently ordered sums over a few dozen SGD steps stays far below this.
TOLERANCE = 1e-5


def max_difference(a: TrainOutcome, b) -> float:
    """Largest absolute difference over every dense parameter and the embedding table."""
    worst = float((a.table - b.table).abs().max())
    for (name, x), (_, y) in zip(a.model.state_dict().items(), b.model.state_dict().items(),
                                 strict=True):  # fmt: skip
        worst = max(worst, float((x.cpu() - y.cpu()).abs().max()))
    return worst


@pytest.fixture(scope="module")
def split():
    return tiny_split()


@pytest.fixture(scope="module")
def naive(split) -> TrainOutcome:
    return train_tiny("naive", split)


@pytest.mark.parametrize(("kind", "knobs"), [
    ("herald", {}),
    ("herald", {"lookahead": 3}),
    ("herald-sync-only", {}),
    ("herald-partition-only", {}),
    ("herald-plus", {}),
    ("het", {"bound": 0}),
])  # fmt: skip
def test_strict_schedulers_train_the_naive_model(split, naive, kind: str, knobs: dict) -> None:
    other = train_tiny(kind, split, **knobs)
    assert other.stale_reads == 0
    assert max_difference(other, naive) < TOLERANCE
    assert other.final.auc == pytest.approx(naive.final.auc, abs=1e-6)


def test_herald_really_partitions_differently_from_naive(split, naive) -> None:
    herald = train_tiny("herald", split)
    assert herald.counts.pull < naive.counts.pull  # not the same run in disguise
    assert 0 < max_difference(herald, naive) < TOLERANCE  # summation order differs, no more


def test_in_float64_the_difference_is_rounding_only(split) -> None:
    naive = train_tiny("naive", split, dtype=torch.float64)
    herald = train_tiny("herald", split, dtype=torch.float64)
    assert max_difference(herald, naive) < 1e-12
    assert max_difference(train_tiny("het", split, dtype=torch.float64, bound=100), naive) > 1e-4


def test_bagpipe_trains_the_naive_model_in_float64(split) -> None:
    naive = train_tiny("naive", split, dtype=torch.float64)
    bagpipe = train_tiny("bagpipe", split, dtype=torch.float64, cache_rows=80, lookahead=4)
    assert bagpipe.counts.pull != naive.counts.pull  # its own cache, not naive's in disguise
    assert max_difference(bagpipe, naive) < 1e-12


def test_naive_equals_plain_synchronous_training(split, naive) -> None:
    train, held_out = split
    plain = train_plain(train, held_out, global_batch=WORKERS * BATCH, embedding_dim=DIM,
                        settings=SETTINGS)  # fmt: skip
    assert plain.iterations == naive.iterations
    assert max_difference(naive, plain) < TOLERANCE
    assert torch.allclose(torch.from_numpy(naive.series["loss"]),
                          torch.from_numpy(plain.losses), atol=1e-5)  # fmt: skip


@pytest.mark.parametrize(("kind", "knobs"), [
    ("het", {"bound": 100}),
    ("fae", {"hot_ratio": 0.2}),
])  # fmt: skip
def test_relaxed_schedulers_train_a_different_model(split, naive, kind: str, knobs: dict) -> None:
    other = train_tiny(kind, split, **knobs)
    assert max_difference(other, naive) > 100 * TOLERANCE
    # The platform reports the accuracy cost; on a tiny trace its sign is not meaningful.
    assert other.final.auc != naive.final.auc
