"""MLflow: each run links to its MLflow run, and the experiment to its parent run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.helpers import poll, submit, tiny_spec, wait_finished


@pytest.fixture
def tracked(serve, sqlite_url, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HERALDBENCH_HOME", str(home))  # the pipelines put artifacts there
    uri = f"sqlite:///{home / 'mlflow.db'}"
    with serve(sqlite_url, track=True, mlflow_tracking_uri=uri, home=home) as api:
        yield api, uri


def test_runs_are_tracked_in_mlflow(tracked) -> None:
    from mlflow import MlflowClient

    api, uri = tracked
    experiment = wait_finished(api, submit(api, tiny_spec(name="tracked")), timeout=120)
    assert experiment["status"] == "succeeded", experiment
    assert experiment["tracking_error"] is None
    assert experiment["mlflow_url"].startswith("http://127.0.0.1:5000/#/experiments/")
    client = MlflowClient(uri)
    parent_id = experiment["mlflow_url"].rsplit("/", 1)[-1]
    # The last run's task ends the parent run just after it stores its own result.
    poll(lambda: client.get_run(parent_id).info.status == "FINISHED", timeout=30)
    for run in experiment["runs"]:
        assert run["tracking_error"] is None and run["mlflow_run_url"]
        mlflow_run = client.get_run(run["mlflow_run_url"].rsplit("/", 1)[-1])
        assert mlflow_run.data.tags["mlflow.parentRunId"] == parent_id
        assert mlflow_run.data.metrics["relative/overall"] == pytest.approx(
            run["relative"]["overall"]
        )
