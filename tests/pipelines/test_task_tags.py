"""What a run's MLflow tags say of its result beyond its metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from heraldbench.pipelines import tasks
from heraldbench.pipelines.grid import expand
from heraldbench.pipelines.submission_log import open_submission
from heraldbench.pipelines.tasks import RunTask, run_task
from tests.api.helpers import tiny_spec

WHY = "the plan balanced by the trace's lookups does not fit; placed by the tables alone"


@pytest.mark.parametrize("fallback", [None, WHY])
def test_a_placement_placed_by_the_tables_alone_is_tagged_with_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fallback: str | None) -> None:  # fmt: skip
    from mlflow import MlflowClient

    monkeypatch.setenv("HERALDBENCH_HOME", str(tmp_path / "home"))
    grid = expand(tiny_spec(name="tags", schedulers=[{"kind": "naive"}]))
    target = open_submission(grid, f"sqlite:///{tmp_path / 'mlflow.db'}")
    (planned,) = grid.runs
    # the placement's result as placing.place_entry gives it, where the greedy plan fell back
    monkeypatch.setattr(tasks, "_execute",
                        lambda *_: ({"placement": "table-wise", "fallback": fallback}, {}))
    record = run_task(RunTask.for_run(planned, "place", "heraldbench-run-tags", target))
    assert record.status == "finished" and record.tracking_error is None
    tags = MlflowClient(target.uri).get_run(record.run_id).data.tags
    assert tags.get("heraldbench.placement_fallback") == fallback
