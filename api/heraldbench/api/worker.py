"""The functions Dask runs for the service; each writes its own status and results.

A task receives the app database's URL and row ids (never ORM objects), opens its own session
(:func:`~heraldbench.api.core.db.worker_database`), *claims* its row (queued -> running, only if
the row still names this task's Dask key), does the work, and writes the outcome. So nothing
depends on the API process staying up, a cancelled or reassigned row is never overwritten, and a
task the scheduler re-runs after its worker died picks its own row up again.

Tasks never raise on a failed run: the error and its traceback are stored on the row. They raise
only when the database itself cannot be written; the scheduler then marks the task erred and the
service's reconciler (recovery.py) marks the row failed.
"""

from __future__ import annotations

import importlib
import logging
import time
import traceback as tb
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select, update

from heraldbench.api.core.db import Database, worker_database
from heraldbench.api.crud import lock_experiment, refresh_progress
from heraldbench.api.models import Dataset, Experiment, Run, Status, Study, utcnow
from heraldbench.api.results import json_safe, relative_figures, short_series

__all__ = [
    "PROGRESS_SECONDS",
    "TUNE_MODULE",
    "execute_run",
    "open_tracking",
    "prepare_tracking",
    "preprocess_dataset",
    "run_study",
    "study_stop_event",
]

logger = logging.getLogger("heraldbench.api")

#: The tuning pipeline's module (see routes/studies.py for the interface it must offer).
TUNE_MODULE = "heraldbench.pipelines.tune"
#: Seconds between two stores of a running run's progress (each store is a database write).
PROGRESS_SECONDS = 1.0


@dataclass(frozen=True)
class _Claim:
    run_task: Any
    experiment_id: int


def _worker_name() -> str | None:
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return None


# --- experiment runs ------------------------------------------------------------------------


def execute_run(database_url: str, run_id: int, dask_key: str, target: Any = None) -> str:
    """Run one experiment run and store its outcome.

    Args:
        database_url: the app database.
        run_id: the row to run.
        dask_key: this task's key; the row must still name it.
        target: a :class:`~heraldbench.pipelines.tracking.Target` to log to MLflow, or None.

    Returns:
        The run's final status, or ``"skipped"`` when the row was not this task's to run.
    """
    from heraldbench.pipelines.tasks import run_task

    db = worker_database(database_url)
    claim = _claim_run(db, run_id, dask_key, target)
    if claim is None:
        return "skipped"
    writer = _ProgressWriter(db, run_id, dask_key)
    record = run_task(claim.run_task, writer, on_stage=writer.stage)  # never raises
    status, closed = _finish_run(db, run_id, dask_key, record)
    if closed is not None and target is not None:
        _close_tracking(db, closed, target)
    return status


class RunCancelled(Exception):
    """Raised inside a running simulation or training when its run was cancelled."""


class _ProgressWriter:
    """Stores a running run's fraction done, and stops the run once it was cancelled.

    The simulator and the trainer call it between iterations. At most every ``check`` seconds it
    reads the run's status; a run no longer running (cancelled by request) raises
    :class:`RunCancelled` there, so the computation ends and the worker is free for the next
    task. Progress itself is advisory: a failed write is dropped, and the row is only touched
    while it is still this task's running row (at most every :data:`PROGRESS_SECONDS`).
    """

    def __init__(self, db: Database, run_id: int, dask_key: str, check: float = 0.5) -> None:
        self.db, self.run_id, self.dask_key, self.check = db, run_id, dask_key, check
        self._last = self._checked = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._checked >= self.check:
            self._checked = now
            self._stop_if_cancelled()
        if total <= 0 or now - self._last < PROGRESS_SECONDS:
            return
        self._last = now
        self._store(progress=round(min(done / total, 1.0), 4))

    def stage(self, text: str | None) -> None:
        """Store what the run does before its samples (None once they start)."""
        self._stop_if_cancelled()
        self._store(stage=text)

    def _store(self, **values: Any) -> None:
        """Set ``values`` on the run while it is still this task's running row."""
        try:
            with self.db.write() as session:
                session.execute(
                    update(Run)
                    .where(Run.id == self.run_id, Run.dask_key == self.dask_key)
                    .where(Run.status == Status.RUNNING)
                    .values(**values)
                )
        except Exception as exc:  # noqa: BLE001 - advisory; the run goes on
            logger.debug("%s of run %s not stored: %s", ", ".join(values), self.run_id, exc)

    def _stop_if_cancelled(self) -> None:
        try:
            with self.db.read() as session:
                row = session.execute(
                    select(Run.status, Run.dask_key).where(Run.id == self.run_id)
                ).first()
        except Exception as exc:  # noqa: BLE001 - unknown: keep running
            logger.debug("status of run %s not read: %s", self.run_id, exc)
            return
        if row is None or row.status != Status.RUNNING or row.dask_key != self.dask_key:
            status = "deleted" if row is None else row.status
            raise RunCancelled(f"run {self.run_id} was {status} while it ran")


def _claim_run(db: Database, run_id: int, dask_key: str, target: Any) -> _Claim | None:
    from heraldbench.pipelines.tasks import RunTask

    with db.write() as session:
        experiment_id = session.scalar(select(Run.experiment_id).where(Run.id == run_id))
        if experiment_id is None:
            return None
        experiment = lock_experiment(session, experiment_id)
        run = session.get(Run, run_id, with_for_update=True, populate_existing=True)
        if experiment is None or run is None or run.dask_key != dask_key:
            return None
        if run.status not in Status.active():  # cancelled, or finished by an earlier attempt
            return None
        run.status, run.started_at, run.worker = Status.RUNNING, utcnow(), _worker_name()
        run.attempts += 1
        run.progress = 0.0
        refresh_progress(session, experiment)
        task = RunTask(
            key=dask_key,
            action=run.action,
            spec=run.spec,
            label=run.label,
            point=run.point_label,
            point_index=run.point_index,
            seed=run.seed,
            baseline_added=run.baseline_added,
            target=target,
        )
        return _Claim(task, experiment_id)


def _finish_run(db: Database, run_id: int, dask_key: str, record: Any) -> tuple[str, int | None]:
    """Store ``record``; returns the run's status and the experiment id if it just ended."""
    with db.write() as session:
        experiment_id = session.scalar(select(Run.experiment_id).where(Run.id == run_id))
        experiment = lock_experiment(session, experiment_id) if experiment_id else None
        run = session.get(Run, run_id, with_for_update=True, populate_existing=True)
        if experiment is None or run is None:
            return "skipped", None
        if run.status != Status.RUNNING or run.dask_key != dask_key:
            return str(run.status), None  # cancelled (or reassigned) meanwhile: keep that
        run.status = Status.SUCCEEDED if record.status == "finished" else Status.FAILED
        run.stage = None
        if run.status == Status.SUCCEEDED:
            run.progress = 1.0
        run.result = json_safe(record.result)
        run.series = json_safe(short_series(record.series))
        run.error, run.traceback = record.error, record.traceback
        run.wall_seconds, run.finished_at = round(record.seconds, 4), utcnow()
        run.mlflow_run_id, run.tracking_error = record.run_id, record.tracking_error
        was_active = experiment.status in Status.active()
        refresh_progress(session, experiment)
        ended = was_active and experiment.status not in Status.active()
        return str(run.status), (experiment.id if ended else None)


# --- MLflow -----------------------------------------------------------------------------


def prepare_tracking(uri: str) -> None:
    """Create (migrate) the MLflow store once, before any task logs to it.

    First-time migrations of a SQLite store race when several workers start them at once.
    """
    from mlflow import MlflowClient

    MlflowClient(uri).search_experiments(max_results=1)


def open_tracking(database_url: str, experiment_id: int, uri: str) -> Any:
    """The MLflow target of an experiment: its parent run, created on first call.

    Returns None (and stores why) when MLflow cannot be used; the runs then run untracked.
    """
    from heraldbench.pipelines.grid import expand
    from heraldbench.pipelines.submission_log import open_submission
    from heraldbench.pipelines.tracking import Target

    db = worker_database(database_url)
    with db.read() as session:
        experiment = session.get(Experiment, experiment_id)
        if experiment is None:
            return None
        if experiment.mlflow_parent_run_id:
            return Target(
                experiment.mlflow_uri or uri,
                experiment.mlflow_experiment_id,
                experiment.mlflow_parent_run_id,
            )
        document = experiment.spec
    try:
        target = open_submission(expand(document), uri)
    except Exception as exc:  # noqa: BLE001 - tracking is optional; the runs go on
        with db.write() as session:
            row = session.get(Experiment, experiment_id)
            row.tracking_error = f"{type(exc).__name__}: {exc}"
        return None
    with db.write() as session:
        row = session.get(Experiment, experiment_id)
        row.mlflow_uri, row.mlflow_experiment_id = uri, target.experiment_id
        row.mlflow_parent_run_id = target.parent_run_id
    return target


def _close_tracking(db: Database, experiment_id: int, target: Any) -> None:
    """End the parent run; log relative figures to the runs and the parent (best effort)."""
    try:
        from mlflow import MlflowClient

        from heraldbench.pipelines.submission_log import summary_metrics
        from heraldbench.pipelines.tracking import log_metrics

        with db.read() as session:
            experiment = session.get(Experiment, experiment_id)
            runs = list(session.scalars(select(Run).where(Run.experiment_id == experiment_id)))
        client = MlflowClient(target.uri)
        figures = relative_figures(runs)
        for run in runs:
            values = {f"relative/{k}": v for k, v in figures[run.id].items() if v is not None}
            if run.mlflow_run_id and values:
                log_metrics(client, run.mlflow_run_id, values)
        failed = sum(r.status == Status.FAILED for r in runs)
        single = len({(r.point_index, r.seed) for r in runs}) == 1
        overall = {r.label: figures[r.id].get("overall") for r in runs} if single else {}
        finished = sum(r.status == Status.SUCCEEDED for r in runs)
        log_metrics(client, target.parent_run_id, summary_metrics(finished, failed, overall))
        status = {Status.SUCCEEDED: "FINISHED", Status.FAILED: "FAILED"}.get(
            experiment.status, "KILLED"
        )
        client.set_terminated(target.parent_run_id, status)
    except Exception as exc:  # noqa: BLE001 - results are stored already
        with db.write() as session:
            session.get(Experiment, experiment_id).tracking_error = f"closing the MLflow run: {exc}"


# --- single-row jobs: datasets and studies ---------------------------------------------


def _claim_row(db: Database, model: type, row_id: int, dask_key: str) -> Any | None:
    with db.write() as session:
        row = session.get(model, row_id, with_for_update=True)
        if row is None or row.dask_key != dask_key or row.status not in Status.active():
            return None
        row.status = Status.RUNNING
        session.flush()
        session.expunge(row)
        return row


def _finish_row(db: Database, model: type, row_id: int, dask_key: str, **values: Any) -> None:
    with db.write() as session:
        row = session.get(model, row_id, with_for_update=True)
        if row is None or row.dask_key != dask_key or row.status != Status.RUNNING:
            return
        for name, value in values.items():
            setattr(row, name, json_safe(value))


def _failure(exc: BaseException) -> dict[str, Any]:
    return {
        "status": Status.FAILED,
        "error": f"{type(exc).__name__}: {exc}",
        "traceback": tb.format_exc(),
    }


def preprocess_dataset(database_url: str, dataset_id: int, dask_key: str) -> str:
    """Prepare a registered raw file on the cluster (a driver task that secedes)."""
    from distributed import worker_client
    from pydantic import TypeAdapter

    from heraldbench.pipelines.preprocess import preprocess
    from heraldbench.platform.spec import DatasetSpec

    db = worker_database(database_url)
    row = _claim_row(db, Dataset, dataset_id, dask_key)
    if row is None:
        return "skipped"
    try:
        source = TypeAdapter(DatasetSpec).validate_python(
            {"kind": row.kind, "path": row.path, **row.options}
        )
        with worker_client() as client:
            result = preprocess(source, Path(row.prepared_path), client=client)
        stats = {
            "samples": result.samples,
            "tables": result.tables,
            "shards": result.shards,
            "total_rows": sum(result.tables.values()),
            "up_to_date": result.up_to_date,
            "stages": result.stages,
            "seconds": round(result.seconds, 3),
        }
        values: dict[str, Any] = {"status": Status.SUCCEEDED, "stats": stats}
    except Exception as exc:  # noqa: BLE001 - stored on the row
        values = _failure(exc)
    _finish_row(db, Dataset, dataset_id, dask_key, **values)
    return str(values["status"])


def study_stop_event(dask_key: str) -> str:
    """The Dask event that cancels the study run by the task ``dask_key``."""
    return f"{dask_key}-stop"


def run_study(
    database_url: str, study_id: int, dask_key: str, storage: str, tracking_uri: str | None = None
) -> str:
    """Run a tuning study through the tuning pipeline (see routes/studies.py), its trials logged
    to the service's MLflow store ``tracking_uri`` (None: untracked)."""
    from distributed import worker_client

    db = worker_database(database_url)
    row = _claim_row(db, Study, study_id, dask_key)
    if row is None:
        return "skipped"
    try:
        tune = importlib.import_module(TUNE_MODULE)
        with worker_client() as client:
            summary = tune.run_study(
                row.spec, storage=storage, study_name=row.storage_name, client=client,
                stop=study_stop_event(dask_key), track=tracking_uri is not None,
                uri=tracking_uri,
            )
        values = {
            "status": Status.SUCCEEDED,
            "trials": summary.get("trials", []),
            "best": summary.get("best", []),
            "plots": summary.get("plots", {}),
            "mlflow": summary.get("mlflow_run"),
        }
    except Exception as exc:  # noqa: BLE001 - stored on the row
        values = _failure(exc)
    _finish_row(db, Study, study_id, dask_key, **values)
    return str(values["status"])
