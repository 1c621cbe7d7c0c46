"""Reconciling the database with the cluster: no row stays queued or running forever.

At startup, and then every ``reconcile_seconds``, every queued or running row (run, dataset,
study) is checked against the Dask scheduler. A row whose task the scheduler no longer knows, or
holds as erred, is an orphan:

* a **queued** orphan never started, so it is **resubmitted** under a new key: a submission is
  never lost, whether the API died between storing and submitting it, the cluster was restarted,
  or Dask was down when it came in;
* a **running** orphan is **marked failed** with the reason. Its worker or cluster died while it
  ran, and the run itself may be why (a worker killed for memory); re-running it silently on
  every restart would hide that and could kill the cluster again. The user sees why and can
  resubmit. (A worker that dies mid-task on a live cluster is not an orphan: the scheduler
  re-runs the task, and the task picks its row up again under the same key.)

Rows updated within ``orphan_grace_seconds`` are left alone by the periodic check (a submission
commits a moment before its tasks reach the scheduler); at startup none are.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from starlette.concurrency import run_in_threadpool

from heraldbench.api import worker
from heraldbench.api.core.db import Database
from heraldbench.api.crud import RunRef, lock_experiment, new_key, refresh_progress
from heraldbench.api.dispatch import Dispatcher
from heraldbench.api.models import Dataset, Experiment, Run, Status, Study, utcnow

__all__ = ["ORPHAN_REASON", "Report", "reconcile", "reconcile_forever"]

logger = logging.getLogger("heraldbench.api")

ORPHAN_REASON = (
    "orphaned: the Dask task of this run no longer exists (its worker or cluster stopped while it "
    "ran, e.g. the service restarted with its own LocalCluster); submit it again to rerun it"
)
_DEAD = (None, "erred", "forgotten")


@dataclass
class Report:
    """What one reconciliation did."""

    resubmitted: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    jobs_resubmitted: list[str] = field(default_factory=list)
    jobs_failed: list[str] = field(default_factory=list)
    skipped: bool = False


@dataclass(frozen=True)
class _Row:
    model: type
    id: int
    status: str
    key: str
    experiment_id: int | None = None
    action: str = "simulate"


async def reconcile(db: Database, dispatcher: Dispatcher, *, grace_seconds: float) -> Report:
    """Resubmit queued orphans and fail running ones (see the module docstring)."""
    rows = await run_in_threadpool(_active_rows, db, grace_seconds)
    states = await dispatcher.task_states(r.key for r in rows)
    if states is None:  # Dask unreachable: nothing can be judged now
        return Report(skipped=True)
    orphans = [r for r in rows if states.get(r.key) in _DEAD]
    report = Report()
    if orphans:
        await _settle(db, dispatcher, orphans, report)
        logger.warning(
            "recovery: resubmitted runs %s, failed runs %s, jobs %s / %s",
            report.resubmitted,
            report.failed,
            report.jobs_resubmitted,
            report.jobs_failed,
        )
    return report


async def reconcile_forever(
    db: Database,
    dispatcher: Dispatcher,
    *,
    every: float,
    grace: float,
    reconnect: Callable[[], Awaitable[tuple[Any, Any]]] | None = None,
) -> None:
    """Run :func:`reconcile` every ``every`` seconds until cancelled.

    While Dask is unavailable, ``reconnect`` (returning a client and cluster) is tried first.
    """
    while True:
        await asyncio.sleep(every)
        try:
            if not dispatcher.available and reconnect is not None:
                dispatcher.client, _ = await reconnect()
            await reconcile(db, dispatcher, grace_seconds=grace)
        except Exception as exc:  # noqa: BLE001 - try again next time
            logger.warning("recovery: reconciliation failed: %s", exc)


def _active_rows(db: Database, grace_seconds: float) -> list[_Row]:
    before = utcnow() - timedelta(seconds=grace_seconds)
    rows: list[_Row] = []
    with db.read() as session:
        for model in (Run, Dataset, Study):
            query = select(model).where(model.status.in_(Status.active()))
            if grace_seconds > 0:
                query = query.where(model.updated_at < before)
            for row in session.scalars(query):
                rows.append(
                    _Row(
                        model,
                        row.id,
                        row.status,
                        row.dask_key,
                        getattr(row, "experiment_id", None),
                        getattr(row, "action", "simulate"),
                    )
                )
    return rows


async def _settle(
    db: Database, dispatcher: Dispatcher, orphans: list[_Row], report: Report
) -> None:
    runs = [r for r in orphans if r.model is Run]
    resubmit = await run_in_threadpool(_rekey_and_fail_runs, db, runs, report)
    for experiment_id, (refs, target) in resubmit.items():
        if await dispatcher.submit_runs(experiment_id, refs, target):
            report.resubmitted += [ref.run_id for ref in refs]
    for row in orphans:
        if row.model is not Run:
            await _settle_job(db, dispatcher, row, report)


def _rekey_and_fail_runs(
    db: Database, runs: list[_Row], report: Report
) -> dict[int, tuple[list[RunRef], Any]]:
    """Give queued orphans new keys and fail running ones; returns what to resubmit."""
    by_experiment: dict[int, list[_Row]] = {}
    for row in runs:
        by_experiment.setdefault(row.experiment_id, []).append(row)
    resubmit: dict[int, tuple[list[RunRef], Any]] = {}
    for experiment_id, rows in by_experiment.items():
        with db.write() as session:
            experiment = lock_experiment(session, experiment_id)
            refs = [ref for row in rows if (ref := _settle_run(session, row, report)) is not None]
            refresh_progress(session, experiment)
            target = _target_of(experiment)
        if refs:
            resubmit[experiment_id] = (refs, target)
    return resubmit


def _settle_run(session: Any, row: _Row, report: Report) -> RunRef | None:
    """Within the experiment's lock: re-key a queued orphan, fail a running one."""
    still = (Run.id == row.id) & (Run.status == row.status) & (Run.dask_key == row.key)
    if row.status == Status.QUEUED:
        key = new_key("run")
        if session.execute(
            update(Run).where(still).values(dask_key=key, updated_at=utcnow())
        ).rowcount:
            return RunRef(row.id, key, row.experiment_id, row.action)
        return None
    done = session.execute(
        update(Run)
        .where(still)
        .values(
            status=Status.FAILED, error=ORPHAN_REASON, finished_at=utcnow(), updated_at=utcnow()
        )
    )
    if done.rowcount:
        report.failed.append(row.id)
    return None


def _target_of(experiment: Experiment) -> Any:
    if not experiment.mlflow_parent_run_id:
        return None
    from heraldbench.pipelines.tracking import Target

    return Target(
        experiment.mlflow_uri or "",
        experiment.mlflow_experiment_id or "",
        experiment.mlflow_parent_run_id,
    )


async def _settle_job(db: Database, dispatcher: Dispatcher, row: _Row, report: Report) -> None:
    name = f"{row.model.__tablename__}/{row.id}"
    key = await run_in_threadpool(_settle_job_row, db, row)
    if key is None:
        report.jobs_failed.append(name)
        return
    function = worker.preprocess_dataset if row.model is Dataset else worker.run_study
    settings = dispatcher.settings
    extra = (
        () if row.model is Dataset
        else (settings.resolved_optuna_storage, settings.resolved_tracking_uri)
    )  # fmt: skip
    if dispatcher.submit_job(function, row.id, key, *extra):
        report.jobs_resubmitted.append(name)


def _settle_job_row(db: Database, row: _Row) -> str | None:
    model = row.model
    still = (model.id == row.id) & (model.status == row.status) & (model.dask_key == row.key)
    with db.write() as session:
        if row.status == Status.QUEUED:
            key = new_key(model.__tablename__)
            rekeyed = session.execute(
                update(model).where(still).values(dask_key=key, updated_at=utcnow())
            )
            return key if rekeyed.rowcount else None
        session.execute(
            update(model)
            .where(still)
            .values(
                status=Status.FAILED,
                error=ORPHAN_REASON.replace("this run", "this job"),
                updated_at=utcnow(),
            )
        )
    return None
