"""A running run's stage (compiling the kernels, before its samples) is shown, then cleared."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from heraldbench.api.core.db import worker_database
from heraldbench.api.models import Run
from heraldbench.api.worker import _ProgressWriter
from tests.api.conftest import _idle
from tests.api.helpers import poll, submit, tiny_spec

STAGE = "compiling the simulator's kernels, once per machine: 1 of 3 (naive)"


def _running_run(api: Any, experiment_id: int) -> dict[str, Any] | None:
    """The run once its samples have started (past any compiling of its own)."""
    runs = api.get(f"/api/experiments/{experiment_id}").json()["runs"]
    return next((r for r in runs if r["status"] == "running" and (r["progress"] or 0) > 0), None)


def test_the_stage_a_task_stores_is_in_the_run_until_it_ends(
    api_sqlite, sqlite_url, dask_cluster
) -> None:
    spec = tiny_spec(
        dataset={"kind": "synthetic-criteo", "samples": 50_000_000, "scale": 0.001, "seed": 1},
        schedulers=[{"kind": "naive"}],
    )
    experiment_id = submit(api_sqlite, spec)
    run = poll(lambda: _running_run(api_sqlite, experiment_id), timeout=300)
    assert run["stage"] is None
    db = worker_database(sqlite_url)
    with db.read() as session:
        key = session.scalar(select(Run.dask_key).where(Run.id == run["id"]))
    writer = _ProgressWriter(db, run["id"], key)
    writer.stage(STAGE)
    assert _running_run(api_sqlite, experiment_id)["stage"] == STAGE
    writer.stage(None)
    assert _running_run(api_sqlite, experiment_id)["stage"] is None
    writer.stage(STAGE)
    api_sqlite.post(f"/api/experiments/{experiment_id}/cancel")
    poll(lambda: _idle(dask_cluster), timeout=120)
    (ended,) = api_sqlite.get(f"/api/experiments/{experiment_id}").json()["runs"]
    assert ended["status"] == "cancelled"
