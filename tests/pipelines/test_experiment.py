"""A grid fans out over a real LocalCluster and lands in a real MLflow store as nested runs."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from mlflow import MlflowClient

from heraldbench.pipelines.experiment import run_experiment
from heraldbench.pipelines.preprocess import preprocess
from heraldbench.platform.data.criteo import CriteoTSVSpec
from tests.pipelines.preprocess import rawfiles

GRID = {
    "name": "grid-test",
    "dataset": {"kind": "synthetic-criteo", "samples": 4000, "scale": 0.005, "seed": 2},
    "cluster": {"workers": 2, "batch_size": 32},
    "cache": {"ratio": [0.05, 0.2]},
    "schedulers": [{"kind": "herald", "lookahead": [1, 2]}],
    "seeds": [0, 1],
}


def children(mlflow: MlflowClient, submission) -> list:
    target = submission.target
    return mlflow.search_runs(
        [target.experiment_id],
        max_results=500,
        filter_string=f"tags.mlflow.parentRunId = '{target.parent_run_id}'",
    )


@pytest.fixture(scope="module")
def grid_submission(client, mlflow_uri, tmp_path_factory):
    out = tmp_path_factory.mktemp("grid-report")
    return run_experiment(GRID, client=client, uri=mlflow_uri, report_dir=out, series_cap=10), out


def test_every_point_seed_and_scheduler_is_a_finished_run(grid_submission) -> None:
    submission, _ = grid_submission
    assert len(submission.records) == 2 * 2 * 3  # points × seeds × (naive + herald × 2)
    assert not submission.failed
    assert {r.worker for r in submission.records} <= {"0", "1"}


def test_relative_figures_are_against_naive_of_the_same_point_and_seed(grid_submission) -> None:
    submission, _ = grid_submission
    for records in submission.groups().values():
        naive = next(r for r in records if r.task.label == "naive")
        assert naive.result["relative"] == {"pull": 1.0, "push": 1.0, "overall": 1.0}
        for record in records:
            totals, base = record.result["totals"], naive.result["totals"]
            assert record.result["relative"]["push"] == pytest.approx(totals["push"] / base["push"])


def test_runs_land_as_nested_mlflow_runs_with_params_metrics_and_artifacts(
    grid_submission, mlflow_uri
) -> None:
    submission, _ = grid_submission
    mlflow = MlflowClient(mlflow_uri)
    parent = mlflow.get_run(submission.target.parent_run_id)
    assert parent.info.status == "FINISHED"
    assert parent.data.params["grid.axes"] == "cache.ratio"
    assert parent.data.metrics["runs/finished"] == 12
    assert parent.data.metrics["run/wall_seconds"] > 0  # the runs' own name for it
    experiment = mlflow.get_experiment(parent.info.experiment_id)
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    assert experiment.tags["heraldbench.version"] and experiment.tags["heraldbench.git_commit"]
    parent_files = {a.path for a in mlflow.list_artifacts(parent.info.run_id)}
    assert {"spec.yaml", "results.json", "comparison.csv", "plots", "report"} <= parent_files
    assert [a.path for a in mlflow.list_artifacts(parent.info.run_id, "plots")] == [
        "plots/relative.png"
    ]

    runs = children(mlflow, submission)
    assert len(runs) == 12 and all(r.info.status == "FINISHED" for r in runs)
    herald = next(
        r
        for r in runs
        if r.data.tags["heraldbench.scheduler"] == "herald lookahead=2"
        and r.data.params["cache.ratio"] == "0.2"
        and r.data.params["seed"] == "1"
    )
    assert herald.data.params["scheduler.kind"] == "herald"
    assert herald.data.params["scheduler.lookahead"] == "2"
    assert herald.data.params["dataset.samples"] == "4000"
    for name in ("totals/overall", "counts/miss_pull", "relative/overall", "run/iterations"):
        assert name in herald.data.metrics, name
    for run in (parent, *runs):
        assert "None" not in run.data.params.values(), run.data.params
    for name in herald.data.metrics:
        if name.startswith("iteration/"):  # allreduce and metadata are zero throughout: not logged
            history = mlflow.get_metric_history(herald.info.run_id, name)
            assert any(m.value != 0 for m in history), name
    assert "iteration/miss_pull" in herald.data.metrics
    assert "iteration/allreduce" not in herald.data.metrics
    iterations = int(herald.data.metrics["run/iterations"])
    history = mlflow.get_metric_history(herald.info.run_id, "iteration/miss_pull")
    stride = int(herald.data.tags["heraldbench.series_stride"])
    assert stride == -(-iterations // 10) and len(history) == -(-iterations // stride) <= 10
    files = {a.path for a in mlflow.list_artifacts(herald.info.run_id)}
    assert {"spec.yaml", "iterations.csv", "result.json", "plots"} <= files
    local = Path(mlflow.download_artifacts(herald.info.run_id, "iterations.csv"))
    assert len(local.read_text().splitlines()) == iterations + 1  # every iteration, plus a header


def test_the_report_is_written_per_point_and_seed(grid_submission) -> None:
    _, out = grid_submission
    assert (out / "plots" / "relative.png").is_file()
    for folder in ("point0-seed0", "point1-seed1"):
        assert {"table1.md", "comparison.md", "comparison.png", "series.png"} <= {
            p.name for p in (out / "report" / folder).iterdir()
        }
    with (out / "comparison.csv").open() as stream:
        assert len(list(csv.DictReader(stream))) == 12


def test_a_failing_run_is_recorded_while_the_others_complete(client, mlflow_uri, tmp_path) -> None:
    raw = CriteoTSVSpec(path=rawfiles.criteo(tmp_path / "day_0", 300))
    preprocess(raw, tmp_path / "prepared", client=client)
    spec = {
        "name": "failing-test",
        "cluster": {"workers": 2, "batch_size": 4},
        "cache": {"rows": 120},
        "dataset": {
            "kind": "prepared",
            "path": [str(tmp_path / "prepared"), str(tmp_path / "nope")],
        },
        "schedulers": [{"kind": "herald"}],
    }
    submission = run_experiment(spec, client=client, uri=mlflow_uri)

    failed = submission.failed
    assert len(failed) == 2 and {r.task.point_index for r in failed} == {1}
    assert all("DataError" in r.error and "is not a prepared dataset" in r.error for r in failed)
    assert all("Traceback" in r.traceback for r in failed)
    finished = [r for r in submission.records if r.status == "finished"]
    assert len(finished) == 2 and finished[1].result["relative"]["overall"] is not None

    mlflow = MlflowClient(mlflow_uri)
    by_id = {r.info.run_id: r for r in children(mlflow, submission)}
    for record in failed:
        run = by_id[record.run_id]
        assert run.info.status == "FAILED"
        assert "is not a prepared dataset" in run.data.tags["heraldbench.error"]
        error = Path(mlflow.download_artifacts(run.info.run_id, "error.txt")).read_text()
        assert "Traceback" in error
    assert all(by_id[r.run_id].info.status == "FINISHED" for r in finished)
    parent = mlflow.get_run(submission.target.parent_run_id)
    assert parent.info.status == "FINISHED" and parent.data.metrics["runs/failed"] == 2
