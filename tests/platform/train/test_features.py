"""Training with multi-hot and sequence features: every id's row pooled into its field, and the
schedulers that train the synchronous model still train exactly it."""

from __future__ import annotations

import pytest
import torch

from heraldbench.platform.data import FeaturesSpec, InMemoryTrace, TableLayout
from heraldbench.platform.data.features import with_features
from heraldbench.platform.train import split_trace, train_plain
from heraldbench.platform.train.model import FieldPooling
from tests.platform.train._tiny import BATCH, DIM, SETTINGS, WORKERS, tiny_trace, train_tiny
from tests.platform.train.test_accuracy import max_difference

FEATURES = FeaturesSpec(multi_hot={"sizes": [2, 1, 3, 1], "pooling": "mean"},
                        sequence={"user": "C1", "item": "C2", "length": 3})
#: The same, ragged: an id brings 1..k ids, and a history holds 1..3 items.
RAGGED = FeaturesSpec(multi_hot={"sizes": [2, 1, 3, 1], "pooling": "mean", "lengths": "uniform"},
                      sequence={"user": "C1", "item": "C2", "length": 3, "min_length": 1})


@pytest.fixture(scope="module", params=[FEATURES, RAGGED], ids=["fixed", "ragged"])
def split(request):
    base = tiny_trace(samples=3_000)
    named = InMemoryTrace(base.ids, base.labels, base.dense,
                          TableLayout(("C1", "C2", "C3", "C4"), base.layout.sizes))
    featured = with_features(named, request.param).materialize()
    assert featured.layout.table_widths == (2, 1, 3, 1, 3)
    if request.param is RAGGED:  # every length occurs, and pads are there to be left out
        assert featured.layout.ragged == (True, False, True, False, True)
        assert {1, 2, 3} <= set(featured.lengths[:, 2]) and {1, 2, 3} <= set(featured.lengths[:, 4])
    return split_trace(featured, SETTINGS.eval_fraction)


def test_pooling_sums_or_averages_each_fields_rows() -> None:
    rows = torch.arange(2 * 4 * 1, dtype=torch.float64).view(2, 4, 1)  # columns of fields 0,0,1,1
    pooled = FieldPooling((0, 0, 1, 1), (1.0, 0.5))(rows)
    assert pooled.squeeze(-1).tolist() == [[1.0, 2.5], [9.0, 6.5]]


def test_pooling_leaves_pads_out_and_averages_over_the_ids_read() -> None:
    rows = torch.arange(2 * 4 * 1, dtype=torch.float64).view(2, 4, 1)  # columns of fields 0,0,1,1
    lengths = torch.tensor([[1, 2], [2, 1]])  # sample 0 reads one id of field 0; 1, of field 1
    pooled = FieldPooling((0, 0, 1, 1), (1.0, 0.5))(rows, lengths)
    assert pooled.squeeze(-1).tolist() == [[0.0, 2.5], [9.0, 6.0]]


def test_naive_on_many_ids_equals_plain_training_in_float64(split) -> None:
    train, held_out = split
    naive = train_tiny("naive", split, dtype=torch.float64, cache_rows=WORKERS * BATCH * 10)
    plain = train_plain(train, held_out, global_batch=WORKERS * BATCH, embedding_dim=DIM,
                        settings=SETTINGS, dtype=torch.float64)
    assert naive.iterations == plain.iterations > 0
    assert max_difference(naive, plain) < 1e-12


@pytest.mark.parametrize(("kind", "knobs"), [("herald", {}), ("herald-plus", {}),
                                             ("het", {"bound": 0}), ("bagpipe", {"lookahead": 4})])
def test_strict_schedulers_train_the_naive_model_on_many_ids(split, kind, knobs) -> None:
    rows = WORKERS * BATCH * 10
    naive = train_tiny("naive", split, dtype=torch.float64, cache_rows=rows)
    other = train_tiny(kind, split, dtype=torch.float64, cache_rows=rows, **knobs)
    assert other.counts.pull != naive.counts.pull or kind == "het"
    assert max_difference(other, naive) < 1e-12


def test_fae_trains_on_many_ids(split) -> None:
    outcome = train_tiny("fae", split, cache_rows=WORKERS * BATCH * 10, hot_ratio=0.2)
    assert outcome.iterations > 0 and 0.0 < outcome.final.auc < 1.0
