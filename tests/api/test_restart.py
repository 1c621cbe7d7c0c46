"""Restarts: records survive the API process, and no run stays queued or running forever."""

from __future__ import annotations

import socket

from sqlalchemy import select

from heraldbench.api.core.db import Database
from heraldbench.api.crud import create_experiment
from heraldbench.api.models import Run, Status
from heraldbench.api.planning import plan_experiment
from heraldbench.api.recovery import ORPHAN_REASON
from tests.api.helpers import poll, submit, tiny_spec, wait_finished


def test_a_restart_lists_every_experiment_with_its_true_status(serve, database_url) -> None:
    with serve(database_url) as api:
        done = submit(api, tiny_spec(name="before-restart"))
        wait_finished(api, done)
        cancelled = submit(api, tiny_spec(name="cancelled-one"))
        api.post(f"/api/experiments/{cancelled}/cancel")
        before = api.get(f"/api/experiments/{done}").json()
    with serve(database_url) as api:
        listed = {e["id"]: e for e in api.get("/api/experiments").json()["data"]}
        assert listed[done]["status"] == "succeeded"
        assert listed[cancelled]["status"] == "cancelled"
        assert api.get(f"/api/experiments/{done}").json()["runs"] == before["runs"]


def _stored_without_submitting(settings, spec) -> int:
    """An experiment stored as a submission stores it, whose tasks never reached Dask."""
    database = Database.connect(settings.resolved_database_url)
    try:
        experiment_id, _, _ = create_experiment(
            database, grid=plan_experiment(spec, settings), document=spec
        )
        return experiment_id
    finally:
        database.dispose()


def _mark_first_run_running(settings, experiment_id: int) -> int:
    database = Database.connect(settings.resolved_database_url)
    try:
        with database.write() as session:
            run = session.scalars(
                select(Run).where(Run.experiment_id == experiment_id).order_by(Run.id)
            ).first()
            run.status, run.dask_key = Status.RUNNING, "heraldbench-run-of-a-dead-cluster"
            return run.id
    finally:
        database.dispose()


def test_orphans_of_a_dead_cluster_are_failed_or_resubmitted(
    serve, make_settings, database_url
) -> None:
    settings = make_settings(database_url)
    experiment_id = _stored_without_submitting(settings, tiny_spec(name="orphans"))
    orphan = _mark_first_run_running(settings, experiment_id)
    with serve(database_url) as api:  # startup reconciles with the scheduler
        experiment = wait_finished(api, experiment_id)
    runs = {r["id"]: r for r in experiment["runs"]}
    assert runs[orphan]["status"] == "failed" and runs[orphan]["error"] == ORPHAN_REASON
    others = [r for r in runs.values() if r["id"] != orphan]
    assert others and all(r["status"] == "succeeded" for r in others)  # queued: resubmitted
    assert experiment["status"] == "failed" and experiment["progress"]["done"] == len(runs)


def _dead_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


def test_a_submission_made_while_dask_is_down_runs_once_it_is_back(serve, sqlite_url) -> None:
    with serve(sqlite_url, dask_scheduler_address=_dead_address(), dask_connect_timeout=1) as api:
        assert api.get("/api/health").json()["dask"] == "unavailable"
        experiment_id = submit(api, tiny_spec(name="while-down"))
        assert api.get(f"/api/experiments/{experiment_id}").json()["status"] == "queued"
    with serve(sqlite_url) as api:
        assert wait_finished(api, experiment_id)["status"] == "succeeded"


def test_the_periodic_check_fails_a_run_whose_task_vanished(
    serve, sqlite_url, make_settings
) -> None:
    with serve(sqlite_url, reconcile_seconds=0.2, orphan_grace_seconds=0) as api:
        experiment_id = submit(api, tiny_spec(name="vanishing"))
        wait_finished(api, experiment_id)
        run_id = _mark_first_run_running(make_settings(sqlite_url), experiment_id)

        def failed() -> bool:
            body = api.get(f"/api/experiments/{experiment_id}").json()
            return {r["id"]: r["status"] for r in body["runs"]}[run_id] == "failed"

        poll(failed, timeout=30)
