"""Database operations on experiments and runs (keyword-only, one session each).

Every function that changes an experiment's runs locks the experiment row first and then
recounts its progress, so concurrent tasks finishing on different workers never lose an update
(see core/db.py for the locking rules).
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from heraldbench.api.core.db import Database
from heraldbench.api.models import Experiment, Run, Status, utcnow
from heraldbench.pipelines.grid import Grid
from heraldbench.platform.exceptions import NotFoundError

__all__ = [
    "RunRef",
    "cancel_experiment",
    "create_experiment",
    "get_experiment",
    "list_experiments",
    "new_key",
    "refresh_progress",
]

_ERROR_SUMMARY_RUNS = 3


@dataclass(frozen=True)
class RunRef:
    """What the dispatcher needs to submit a run's task."""

    run_id: int
    dask_key: str
    experiment_id: int
    action: str


def new_key(prefix: str) -> str:
    """A Dask key unique across databases sharing one scheduler."""
    return f"heraldbench-{prefix}-{uuid.uuid4().hex}"


def create_experiment(
    db: Database, *, grid: Grid, document: dict[str, Any], client_key: str | None = None
) -> tuple[int, list[RunRef], bool]:
    """Insert an experiment and all its runs in one transaction.

    Returns:
        (experiment id, the runs to submit, whether it is new). A repeated ``client_key``
        returns the experiment it created before and no runs to submit.
    """
    try:
        with db.write() as session:
            experiment = _new_experiment(grid, document, client_key)
            session.add(experiment)
            session.flush()
            refs = [RunRef(r.id, r.dask_key, experiment.id, r.action) for r in experiment.runs]
            return experiment.id, refs, True
    except IntegrityError:
        if client_key is None:
            raise
    with db.read() as session:
        found = session.scalar(select(Experiment.id).where(Experiment.client_key == client_key))
    if found is None:  # the conflict was something else
        raise RuntimeError("could not store the experiment")
    return found, [], False


def _new_experiment(grid: Grid, document: dict[str, Any], client_key: str | None) -> Experiment:
    labels = list(dict.fromkeys(r.label for r in grid.runs))
    runs = [
        Run(
            action=r.actions[-1],  # with mode: train trained, else simulated or placed
            scheduler=r.kind,
            label=r.label,
            params=(r.spec.placements if r.placement else r.spec.schedulers)[0].knobs(),
            point=r.point.values,
            point_index=r.point.index,
            point_label=r.point.label,
            seed=r.seed,
            baseline_added=r.baseline_added,
            spec=r.spec.model_dump(mode="json"),
            status=Status.QUEUED,
            dask_key=new_key("run"),
        )
        for r in grid.runs
    ]
    return Experiment(
        name=grid.name,
        status=Status.QUEUED,
        mode=grid.runs[0].spec.mode,
        spec=document,
        schedulers=labels,
        runs_total=len(runs),
        runs_done=0,
        client_key=client_key,
        runs=runs,
    )


def list_experiments(
    db: Database, *, status: Status | None, limit: int, offset: int
) -> tuple[list[Experiment], int]:
    """A page of experiments, newest first, and the total matching ``status``."""
    query = select(Experiment)
    counted = select(func.count(Experiment.id))
    if status is not None:
        query, counted = (
            query.where(Experiment.status == status),
            counted.where(Experiment.status == status),
        )
    with db.read() as session:
        total = session.scalar(counted) or 0
        rows = session.scalars(query.order_by(Experiment.id.desc()).limit(limit).offset(offset))
        return list(rows), total


def get_experiment(db: Database, *, experiment_id: int, with_runs: bool = True) -> Experiment:
    """One experiment (with its runs loaded).

    Raises:
        NotFoundError: no such id.
    """
    options = [selectinload(Experiment.runs)] if with_runs else []
    with db.read() as session:
        experiment = session.get(Experiment, experiment_id, options=options)
        if experiment is None:
            raise NotFoundError(f"experiment {experiment_id} does not exist")
        return experiment


def lock_experiment(session: Session, experiment_id: int) -> Experiment | None:
    """The experiment row, locked for update (PostgreSQL) within ``session``'s transaction."""
    return session.get(Experiment, experiment_id, with_for_update=True, populate_existing=True)


def cancel_experiment(db: Database, *, experiment_id: int) -> tuple[Experiment, list[str]]:
    """Cancel an experiment and its queued and running runs.

    A finished experiment is left as it is. Returns the experiment and the Dask keys of the
    runs cancelled (so the caller can cancel their tasks too; tasks also check before running
    and never overwrite a cancelled run).
    """
    with db.write() as session:
        experiment = lock_experiment(session, experiment_id)
        if experiment is None:
            raise NotFoundError(f"experiment {experiment_id} does not exist")
        keys: list[str] = []
        if experiment.status in Status.active():
            active = Run.status.in_(Status.active())
            keys = list(
                session.scalars(
                    select(Run.dask_key).where(Run.experiment_id == experiment_id, active)
                )
            )
            session.execute(
                update(Run)
                .where(Run.experiment_id == experiment_id, active)
                .values(
                    status=Status.CANCELLED,
                    finished_at=utcnow(),
                    updated_at=utcnow(),
                    error="cancelled by request",
                )
            )
            experiment.status = Status.CANCELLED
            refresh_progress(session, experiment)
    return get_experiment(db, experiment_id=experiment_id, with_runs=False), keys


def refresh_progress(session: Session, experiment: Experiment) -> None:
    """Recount ``experiment``'s runs and set its progress, status and error.

    The caller holds the experiment's lock. A cancelled experiment stays cancelled.
    """
    rows = session.execute(
        select(Run.status, func.count())
        .where(Run.experiment_id == experiment.id)
        .group_by(Run.status)
    ).all()
    tally = Counter({status: count for status, count in rows})
    total = sum(tally.values())
    done = sum(tally[s] for s in Status.terminal())
    experiment.runs_total, experiment.runs_done = total, done
    experiment.updated_at = utcnow()
    if experiment.status == Status.CANCELLED:
        return
    if done == total:
        experiment.status = Status.FAILED if tally[Status.FAILED] else Status.SUCCEEDED
        experiment.error = _failure_summary(session, experiment.id, tally[Status.FAILED], total)
    elif tally[Status.RUNNING] or done:
        experiment.status = Status.RUNNING
    else:
        experiment.status = Status.QUEUED


def _failure_summary(session: Session, experiment_id: int, failed: int, total: int) -> str | None:
    if not failed:
        return None
    errors = session.execute(
        select(Run.label, Run.error)
        .where(Run.experiment_id == experiment_id, Run.status == Status.FAILED)
        .order_by(Run.id)
        .limit(_ERROR_SUMMARY_RUNS)
    ).all()
    lines = [f"{failed} of {total} runs failed"] + [f"{label}: {error}" for label, error in errors]
    if failed > len(errors):
        lines.append(f"... and {failed - len(errors)} more")
    return "\n".join(lines)
