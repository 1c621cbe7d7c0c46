"""Placements trained in a submission (``mode: train``): each placement is placed and trained as
Dask tasks beside the schedulers' (simulated and trained); its trained run holds the held-out
quality next to naive's, the bytes its ranks moved (equal to the counted ones) and the
placement's counted figures on the training split."""

from __future__ import annotations

import pytest
from mlflow import MlflowClient

from heraldbench.pipelines.experiment import run_experiment
from heraldbench.platform.placing import place_entry
from heraldbench.platform.spec import parse_spec
from heraldbench.platform.train import training_split
from tests.pipelines.test_experiment import children

SPEC = {
    "name": "placements-trained",
    "mode": "train",
    "dataset": {"kind": "synthetic-criteo", "samples": 3000, "scale": 0.002, "seed": 3},
    "cluster": {"workers": 4, "batch_size": 32, "hosts": 2, "devices_per_host": 2},
    "embedding_dim": 8,
    "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
    "placements": [{"kind": "row-wise"}, {"kind": "flexshard", "memory_headroom": 0.5}],
    "baseline": "row-wise",
    "train": {"model": "small", "device": "cpu", "max_iterations": 12},
}


@pytest.fixture(scope="module")
def submission(client, mlflow_uri):
    return run_experiment(SPEC, client=client, uri=mlflow_uri, series_cap=10)


def _trained(submission, label: str):
    return next(r for r in submission.records
                if r.task.action == "train" and r.task.label == label)  # fmt: skip


def test_each_placement_is_placed_and_trained(submission) -> None:
    assert not submission.failed, [r.error for r in submission.failed]
    actions = [(r.task.label, r.task.action) for r in submission.records]
    for label in ("row-wise", "flexshard memory_headroom=0.5"):
        assert actions.count((label, "place")) == 1 and actions.count((label, "train")) == 1


def test_a_trained_placement_moves_what_it_counts_and_learns_what_naive_does(submission) -> None:
    """Float32 on 12 iterations: a placement changes where rows live, not what is learned, so
    its AUC is naive's within float rounding."""
    naive = _trained(submission, "naive").result
    for label in ("row-wise", "flexshard memory_headroom=0.5"):
        result = _trained(submission, label).result
        assert result["trained"]["measured_equals_counted"] is True
        assert result["trained"]["iterations"] == 12
        assert result["metrics"]["auc"] == pytest.approx(naive["metrics"]["auc"], abs=1e-4)
        assert abs(result["metrics_vs_naive"]["auc"]) <= 1e-4


def test_its_counted_figures_are_those_of_the_training_split(submission) -> None:
    spec = parse_spec({**SPEC, "placements": [SPEC["placements"][1]], "baseline": "naive"})
    train_trace, _ = training_split(spec, spec.dataset.open())
    expected = place_entry(spec, 0, train_trace)
    result = _trained(submission, "flexshard memory_headroom=0.5").result
    assert result["bytes_per_iteration"] == pytest.approx(expected["bytes_per_iteration"])
    assert result["device_memory_max_bytes"] == expected["device_memory_max_bytes"]


def test_the_trained_placement_is_a_placement_s_mlflow_run(submission, mlflow_uri) -> None:
    runs = [r for r in children(MlflowClient(mlflow_uri), submission)
            if r.data.tags["heraldbench.action"] == "train"]  # fmt: skip
    flex = next(r for r in runs if r.data.tags["heraldbench.scheduler"].startswith("flexshard"))
    assert flex.data.tags["heraldbench.paradigm"] == "placement"
    assert flex.data.params["placement.kind"] == "flexshard"
    assert 0.0 < flex.data.metrics["accuracy/auc"] < 1.0
