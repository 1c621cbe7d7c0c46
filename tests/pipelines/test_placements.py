"""Placements in a submission: one Dask task and one nested MLflow run each, beside the
schedulers' runs, and one side-by-side comparison per (point, seed) against the baseline."""

from __future__ import annotations

import pytest
from mlflow import MlflowClient

from heraldbench.pipelines.experiment import run_experiment
from heraldbench.pipelines.grid import count_runs, expand
from tests.pipelines.test_experiment import children

SPEC = {
    "name": "placements-test",
    "dataset": {"kind": "synthetic-criteo", "samples": 4000, "scale": 0.005, "seed": 2},
    "cluster": {"workers": 4, "batch_size": 32, "hosts": 2},
    "embedding_dim": 16,
    "schedulers": [{"kind": "herald"}],
    "placements": [{"kind": "row-wise"}, {"kind": "flexshard", "memory_headroom": 0.5}],
    "baseline": "row-wise",
}


def test_a_grid_counts_and_expands_its_placements() -> None:
    grid = expand({**SPEC, "seeds": [0, 1]})
    assert count_runs({**SPEC, "seeds": [0, 1]}) == len(grid.runs) == 2 * (2 + 2)
    placed = [r for r in grid.runs if r.placement]
    assert [r.label for r in placed[:2]] == ["row-wise", "flexshard memory_headroom=0.5"]
    assert all(r.actions == ("place",) for r in placed)


@pytest.fixture(scope="module")
def submission(client, mlflow_uri):
    return run_experiment(SPEC, client=client, uri=mlflow_uri, series_cap=10)


def test_placements_run_beside_the_schedulers_in_one_comparison(submission) -> None:
    assert not submission.failed
    assert [r.task.action for r in submission.records] == ["simulate"] * 2 + ["place"] * 2
    document = submission.to_json()
    [comparison] = document["side_by_side"]
    rows = {r["label"]: r for r in comparison["rows"]}
    assert list(rows) == ["naive", "herald", "row-wise", "flexshard memory_headroom=0.5"]
    assert rows["row-wise"]["relative"]["bytes"] == 1.0
    assert rows["herald"]["bytes_per_iteration"]["intra_host"] == 0.0
    assert rows["flexshard memory_headroom=0.5"]["relative"]["bytes"] < 1
    # the schedulers' own relative figures stay against naive; a placement has none
    placed = next(r for r in document["runs"] if r["action"] == "place")
    assert "relative" not in placed["result"]


def test_each_placement_is_a_nested_mlflow_run(submission, mlflow_uri) -> None:
    runs = {r.data.tags["heraldbench.scheduler"]: r
            for r in children(MlflowClient(mlflow_uri), submission)}
    flex = runs["flexshard memory_headroom=0.5"]
    assert flex.info.status == "FINISHED"
    assert flex.data.tags["heraldbench.paradigm"] == "placement"
    assert flex.data.params["placement.kind"] == "flexshard"
    assert flex.data.params["placement.memory_headroom"] == "0.5"
    assert flex.data.params["action"] == "place" and flex.data.params["cluster.hosts"] == "2"
    metrics = flex.data.metrics
    assert metrics["bytes_per_iteration/inter_host"] > 0
    assert metrics["comm_ms_per_iteration/tcp-100g"] > 0
    assert metrics["run/device_memory_max_bytes"] > 0 and metrics["run/load_balance"] >= 1
    assert runs["herald"].data.tags["heraldbench.paradigm"] == "scheduler"


def test_report_of_the_results_file_keeps_the_placements_beside(submission, tmp_path) -> None:
    """``heraldbench report results.json`` of a submission: its placement runs are in the
    side-by-side table and comparison.md's section, with the submission's own figures."""
    import json

    from heraldbench.platform.report_files import report_command

    path = tmp_path / "results.json"
    path.write_text(json.dumps(submission.to_json(), default=str))
    written = {p.name for p in report_command(path, tmp_path / "report")}
    assert {"side_by_side.md", "side_by_side.csv", "comparison.md"} <= written
    text = (tmp_path / "report" / "side_by_side.md").read_text()
    [comparison] = submission.to_json()["side_by_side"]
    for row in comparison["rows"]:
        assert f"| {row['label']} | {row['paradigm']} |" in text
    assert "## Schedulers and placements, relative to row-wise" in (
        tmp_path / "report" / "comparison.md").read_text()
