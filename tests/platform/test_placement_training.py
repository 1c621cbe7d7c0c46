"""``heraldbench train`` with placements: each trained beside the schedulers on the same split."""

from __future__ import annotations

import pytest

from heraldbench.platform.spec import parse_spec
from heraldbench.platform.training import train_experiment

KINDS = ["table-wise", "row-wise", "table-row-wise", "column-wise", "data-parallel",
         "recshard", "flexshard"]


def _spec(backend: str = "emulated", kinds: list[str] = KINDS, ragged: bool = False) -> dict:
    multi_hot = {"sizes": {"item": 2}, "pooling": "mean"}
    sequence = {"user": "user", "item": "item", "length": 4}
    if ragged:  # an item brings 1 or 2 ids, and a history holds 1 to 4 items
        multi_hot, sequence = {**multi_hot, "lengths": "uniform"}, {**sequence, "min_length": 1}
    return {
        "name": "trained-placements", "mode": "train",
        "dataset": {"kind": "synthetic", "profile": "movielens-100k", "samples": 6_000,
                    "scale": 1.0, "seed": 2,
                    "features": {"multi_hot": multi_hot, "sequence": sequence}},
        "cluster": {"workers": 4, "batch_size": 16, "hosts": 2, "devices_per_host": 2},
        "cache": {"ratio": 0.5}, "embedding_dim": 8,
        "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
        "placements": [{"kind": k} for k in kinds],
        "train": {"model": "small", "device": "cpu", "dtype": "float64", "backend": backend,
                  "max_iterations": 30},
    }


@pytest.mark.parametrize("ragged", [False, True], ids=["fixed", "ragged"])
def test_every_placement_trains_the_synchronous_model_and_moves_what_is_counted(ragged) -> None:
    document = train_experiment(parse_spec(_spec(ragged=ragged))).to_json()
    trained = {row["placement"]: row for row in document["placements_trained"]}
    assert list(trained) == KINDS
    for row in trained.values():
        assert row["iterations"] == 30
        assert row["measured_equals_counted"] and row["replicas_identical"], row["placement"]
        # float64, same batches and seed: the placement changes where rows live, not the model
        assert abs(row["metrics_vs_naive"]["auc"]) < 1e-9, row["placement"]
        assert abs(row["metrics_vs_naive"]["logloss"]) < 1e-9, row["placement"]
    assert {r["label"] for r in document["side_by_side"]["rows"]} >= {"naive", *KINDS}


@pytest.mark.slow
def test_placements_train_as_gloo_processes_with_the_distributed_backend() -> None:
    document = train_experiment(parse_spec(_spec("distributed", ["row-wise"]))).to_json()
    [row] = document["placements_trained"]
    assert row["measured_equals_counted"] and abs(row["metrics_vs_naive"]["auc"]) < 1e-9
