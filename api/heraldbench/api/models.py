"""The app's tables (SQLAlchemy 2, typed): experiments and their runs, studies, datasets.

Rows are the service's memory: Dask tasks write their own status and results here, so a record
survives the API process and the cluster. Times are UTC. JSON columns hold documents the service
returns as they are (the submitted spec, a run's results).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from heraldbench.api.core.db import Base

__all__ = ["Dataset", "Experiment", "Run", "Status", "Study", "utcnow"]


class Status(StrEnum):
    """Status of an experiment, run, study or dataset."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @classmethod
    def active(cls) -> tuple[Status, ...]:
        return (cls.QUEUED, cls.RUNNING)

    @classmethod
    def terminal(cls) -> tuple[Status, ...]:
        return (cls.SUCCEEDED, cls.FAILED, cls.CANCELLED)


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Timestamps:
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow, index=True
    )


class Experiment(_Timestamps, Base):
    """A submitted (grid) spec; one :class:`Run` per (point, seed, scheduler)."""

    __tablename__ = "experiments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True, default=Status.QUEUED)
    mode: Mapped[str] = mapped_column(String(16))
    spec: Mapped[dict[str, Any]]
    schedulers: Mapped[list[Any]]
    runs_total: Mapped[int] = mapped_column(default=0)
    runs_done: Mapped[int] = mapped_column(default=0)
    error: Mapped[str | None] = mapped_column(Text)
    #: Optional client-chosen key (``Idempotency-Key`` header): a retried POST lands once.
    client_key: Mapped[str | None] = mapped_column(String(200), unique=True)
    mlflow_uri: Mapped[str | None] = mapped_column(Text)
    mlflow_experiment_id: Mapped[str | None] = mapped_column(String(64))
    mlflow_parent_run_id: Mapped[str | None] = mapped_column(String(64))
    tracking_error: Mapped[str | None] = mapped_column(Text)

    runs: Mapped[list[Run]] = relationship(
        back_populates="experiment", order_by="Run.id", cascade="all, delete-orphan"
    )


class Run(_Timestamps, Base):
    """One (point, seed, scheduler) of an experiment: one Dask task."""

    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    experiment_id: Mapped[int] = mapped_column(ForeignKey("experiments.id"), index=True)
    action: Mapped[str] = mapped_column(String(16), default="simulate")
    scheduler: Mapped[str] = mapped_column(String(64))
    label: Mapped[str] = mapped_column(String(300))
    params: Mapped[dict[str, Any]]
    point: Mapped[dict[str, Any]]
    point_index: Mapped[int]
    point_label: Mapped[str] = mapped_column(Text)
    seed: Mapped[int]
    baseline_added: Mapped[bool] = mapped_column(default=False)
    spec: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16), index=True, default=Status.QUEUED)
    error: Mapped[str | None] = mapped_column(Text)
    traceback: Mapped[str | None] = mapped_column(Text)
    result: Mapped[dict[str, Any] | None]
    series: Mapped[dict[str, Any] | None]
    wall_seconds: Mapped[float | None]
    dask_key: Mapped[str] = mapped_column(String(100), index=True)
    attempts: Mapped[int] = mapped_column(default=0)
    #: Fraction of the run's samples done (0..1) while it runs; written by the task, throttled.
    progress: Mapped[float | None]
    #: What a running run does before its samples, shown instead of its progress (compiling).
    stage: Mapped[str | None] = mapped_column(String(200))
    worker: Mapped[str | None] = mapped_column(String(200))
    mlflow_run_id: Mapped[str | None] = mapped_column(String(64))
    tracking_error: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    experiment: Mapped[Experiment] = relationship(back_populates="runs")


class Study(_Timestamps, Base):
    """A tuning study (Optuna); filled in by the tuning pipeline's task."""

    __tablename__ = "studies"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True, default=Status.QUEUED)
    spec: Mapped[dict[str, Any]]
    directions: Mapped[list[Any]]
    storage_name: Mapped[str] = mapped_column(String(200))
    trials: Mapped[list[Any] | None]
    best: Mapped[list[Any] | None]
    plots: Mapped[dict[str, Any] | None]
    #: The study's MLflow parent run: ``{"uri", "experiment_id", "run_id"}`` (None: untracked).
    mlflow: Mapped[dict[str, Any] | None]
    error: Mapped[str | None] = mapped_column(Text)
    traceback: Mapped[str | None] = mapped_column(Text)
    dask_key: Mapped[str] = mapped_column(String(100), index=True)


class Dataset(_Timestamps, Base):
    """A raw file registered for preprocessing into a prepared dataset."""

    __tablename__ = "datasets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    path: Mapped[str] = mapped_column(Text)
    options: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16), index=True, default=Status.QUEUED)
    stats: Mapped[dict[str, Any] | None]
    prepared_path: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    traceback: Mapped[str | None] = mapped_column(Text)
    dask_key: Mapped[str] = mapped_column(String(100), index=True)
