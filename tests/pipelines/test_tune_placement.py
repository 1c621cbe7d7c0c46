"""A study over a placement's knobs, on the session's real LocalCluster with a real SQLite
Optuna storage and MLflow store: each trial places and counts the tuned placement alone, and its
metrics are the placement's own figures over naive's with the spec's cache."""

from __future__ import annotations

import copy

import pytest
from mlflow import MlflowClient

from heraldbench.pipelines.tune import tune_study
from heraldbench.platform.placing import place_entry
from heraldbench.platform.runner import simulate_run
from heraldbench.platform.schedulers import NaiveSpec
from heraldbench.platform.spec import parse_spec

STUDY = {
    "name": "tune-placement-test",
    "dataset": {"kind": "synthetic-criteo", "samples": 4000, "scale": 0.005, "seed": 2},
    "cluster": {"workers": 4, "batch_size": 32, "hosts": 2, "devices_per_host": 2},
    "cache": {"ratio": 0.1},
    "embedding_dim": 16,
    "schedulers": [{"kind": "naive"}],
    "placements": [{"kind": "row-wise"}, {"kind": "flexshard"}],
    "tuning": {
        "placement": "flexshard",
        "space": {
            "placement.memory_headroom": {"low": 0.0, "high": 1.0},
            "placement.hot_share": {"choices": [0.2, 0.8]},
        },
        "objectives": ["traffic", "device_memory"],
        "constraints": [{"metric": "load_balance", "max": 10.0},
                        {"metric": "comm_time", "profile": "rdma-100g", "max": 1e6}],
        "trials": 4,
        "sampler": {"kind": "random", "seed": 3},
    },
}


@pytest.fixture(scope="module")
def study(client, mlflow_uri, tmp_path_factory):
    storage = f"sqlite:///{tmp_path_factory.mktemp('optuna') / 'optuna.db'}"
    return tune_study(copy.deepcopy(STUDY), client=client, storage=storage, uri=mlflow_uri,
                      track=True, out_dir=tmp_path_factory.mktemp("study"))  # fmt: skip


def test_every_trial_completes_with_the_placement_s_metrics(study) -> None:
    assert [o.state for o in study.added] == ["COMPLETE"] * 4
    for row in study.rows:
        assert set(row.params) == {"placement.memory_headroom", "placement.hot_share"}
        assert {"traffic", "device_memory", "load_balance", "comm_time.rdma-100g",
                "inter_host_mb_per_iteration"} <= set(row.metrics)  # fmt: skip


def test_the_objectives_are_the_placement_s_figures_over_naive_s(study) -> None:
    """Recomputed in-process: the drawn FlexShard placed on the trace, its bytes per iteration
    over naive's overall bytes per iteration with the spec's cache."""
    base = parse_spec({k: v for k, v in STUDY.items() if k != "tuning"})
    trace = base.dataset.open()
    naive = simulate_run(base, NaiveSpec(), trace=trace)
    naive_per_iteration = naive.counts.bytes(16)["overall"] / naive.iterations
    for row in study.rows:
        knobs = {name.partition(".")[2]: value for name, value in row.params.items()}
        trial = parse_spec({**base.model_dump(), "placements": [{"kind": "flexshard", **knobs}],
                            "baseline": "naive"})  # fmt: skip
        placed = place_entry(trial, 0, trace)
        moved = sum(placed["bytes_per_iteration"].values())
        assert row.values[0] == pytest.approx(moved / naive_per_iteration, rel=1e-12)
        assert row.values[1] == pytest.approx(placed["device_memory_max_bytes"] / 2**20)
        assert row.metrics["load_balance"] == pytest.approx(placed["load_balance"])


def test_each_trial_logs_the_placement_s_knobs_to_mlflow(study, mlflow_uri) -> None:
    mlflow = MlflowClient(mlflow_uri)
    target = study.target
    runs = mlflow.search_runs([target.experiment_id], max_results=50, filter_string=(
        f"tags.mlflow.parentRunId = '{target.parent_run_id}'"))  # fmt: skip
    assert len(runs) == 4
    for run in runs:
        assert run.data.params["placement.kind"] == "flexshard"
        assert "placement.memory_headroom" in run.data.params
        assert run.data.metrics["device_memory"] > 0


def test_a_scheduler_trial_measures_its_comm_time_too() -> None:
    """``comm_time`` of a scheduler's trial is its modelled time's communication part, per
    iteration, on every profile its run is modelled on."""
    from heraldbench.pipelines.tune.measure import measure

    spec = parse_spec({"name": "comm", "dataset": STUDY["dataset"],
                       "cluster": {"workers": 2, "batch_size": 32}, "embedding_dim": 16,
                       "schedulers": [{"kind": "herald"}], "lower_bound": False})  # fmt: skip
    measured = measure(spec, None)
    iterations = measured.result["iterations"]
    for profile, estimate in measured.result["time"].items():
        expected = estimate["comm_s"] / iterations * 1000.0
        assert measured.metrics[f"comm_time.{profile}"] == pytest.approx(expected, rel=1e-12)
        time = measured.metrics[f"time.{profile}"]  # comm alone, or overlapped: at most the time
        assert 0 < measured.metrics[f"comm_time.{profile}"] <= time * (1 + 1e-12)
