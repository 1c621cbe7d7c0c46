"""A task that Dask runs again (its worker died) goes on in the MLflow run it started."""

from __future__ import annotations

from pathlib import Path

import pytest

from heraldbench.pipelines.grid import expand
from heraldbench.pipelines.submission_log import open_submission
from heraldbench.pipelines.tasks import RunTask, run_task
from tests.api.helpers import tiny_spec


@pytest.fixture
def task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunTask:
    monkeypatch.setenv("HERALDBENCH_HOME", str(tmp_path / "home"))  # local artifacts
    grid = expand(tiny_spec(name="rerun", schedulers=[{"kind": "naive"}]))
    target = open_submission(grid, f"sqlite:///{tmp_path / 'mlflow.db'}")
    (planned,) = grid.runs
    return RunTask.for_run(planned, "simulate", "heraldbench-run-0123abcd", target)


def test_a_second_attempt_continues_the_first_attempts_run(task: RunTask) -> None:
    from mlflow import MlflowClient

    first, second = run_task(task), run_task(task)
    assert first.status == second.status == "finished"
    assert first.tracking_error is None and second.tracking_error is None
    assert second.run_id == first.run_id
    runs = MlflowClient(task.target.uri).search_runs(
        [task.target.experiment_id], f"tags.`mlflow.parentRunId` = '{task.target.parent_run_id}'"
    )
    assert [run.info.run_id for run in runs] == [first.run_id]
    assert runs[0].info.status == "FINISHED"
