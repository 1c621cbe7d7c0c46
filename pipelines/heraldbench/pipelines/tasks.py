"""The Dask task of an experiment: one (point, seed, scheduler) run, simulated or trained.

A task receives a spec (plain JSON, never arrays) and opens the trace itself, so it runs on any
worker that can read the dataset. It never raises: a failure becomes a ``failed`` record with the
error and its traceback (and a FAILED MLflow run), so one bad run cannot stop the others.
"""

from __future__ import annotations

import json
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from heraldbench.pipelines.tracking import (
    SERIES_CAP,
    Target,
    flatten,
    guarded,
    log_metrics,
    log_params,
    scalar_metrics,
    series_metrics,
)

if TYPE_CHECKING:
    from heraldbench.pipelines.grid import PlannedRun

__all__ = ["RunRecord", "RunTask", "run_task"]

Action = Literal["simulate", "train", "place"]
#: ``progress(done, total)``: samples finished so far out of the run's total.
Progress = Callable[[int, int], None]
#: Called with what a run does before its samples (compiling), then with None.
OnStage = Callable[[str | None], None]


@dataclass(frozen=True)
class RunTask:
    """What a worker needs to run and log one run.

    Attributes:
        key: unique name of the run in the submission (also its Dask key).
        action: "simulate" counts traffic; "train" trains the model with the same decisions
            (a placement's run: trains its one placement); "place" places and counts the spec's
            one placement.
        spec: the run's effective spec (JSON): one scheduler, one seed, the point's values.
        label: the scheduler with its non-default knobs (``herald lookahead=2``).
        point: the grid point's label; seed: the run's seed.
        target: where to log in MLflow; None logs nothing.
    """

    key: str
    action: Action
    spec: dict[str, Any]
    label: str
    point: str
    point_index: int
    seed: int
    baseline_added: bool
    target: Target | None
    series_cap: int = SERIES_CAP

    @classmethod
    def for_run(
        cls, run: PlannedRun, action: Action, key: str, target: Target | None, series_cap: int = SERIES_CAP
    ) -> RunTask:
        """The task of one :class:`~heraldbench.pipelines.grid.PlannedRun` of a grid."""
        return cls(
            key=key,
            action=action,
            spec=run.spec.model_dump(mode="json"),
            label=run.label,
            point=run.point.label,
            point_index=run.point.index,
            seed=run.seed,
            baseline_added=run.baseline_added,
            target=target,
            series_cap=series_cap,
        )

    @property
    def placed(self) -> bool:
        """A placement's run (its spec holds the one placement; a scheduler's holds none)."""
        return bool(self.spec.get("placements"))

    @property
    def run_name(self) -> str:
        parts = [self.label, self.point if self.point != "default" else "", f"seed {self.seed}"]
        return " · ".join(p for p in parts if p) + (" · train" if self.action == "train" else "")


@dataclass
class RunRecord:
    """The outcome of a task.

    Attributes:
        status: "finished" or "failed".
        result: ``RunResult.to_json()`` (plus ``time``, ``accuracy`` where known).
        series: per-iteration arrays (cluster totals) of a finished run.
        error: ``Type: message`` of a failed run; traceback: its traceback.
        run_id: the MLflow run, when tracked.
        tracking_error: why MLflow logging failed, when it did (the run itself may be fine).
    """

    task: RunTask
    status: Literal["finished", "failed"] = "failed"
    result: dict[str, Any] | None = None
    series: dict[str, np.ndarray] = field(default_factory=dict)
    error: str | None = None
    traceback: str | None = None
    run_id: str | None = None
    tracking_error: str | None = None
    worker: str | None = None
    seconds: float = 0.0


def run_task(
    task: RunTask, progress: Progress | None = None, on_stage: OnStage | None = None
) -> RunRecord:
    """Run and log one task; never raises. ``progress(done, total)`` is called as samples
    finish, ``on_stage`` while the kernels the run needs are compiled (where they are not yet)."""
    started = time.perf_counter()
    record = RunRecord(task, worker=_worker_name())
    tracker = _Tracker(task, record)
    try:
        record.result, record.series = _execute(task, progress, on_stage)
        record.status = "finished"
        tracker.log_result()
    except Exception as exc:  # noqa: BLE001 - recorded, never lost
        record.error = f"{type(exc).__name__}: {exc}"
        record.traceback = traceback.format_exc()
        tracker.log_failure()
    record.seconds = time.perf_counter() - started
    tracker.end()
    return record


def _worker_name() -> str | None:
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except ValueError:  # not on a worker (tests calling the task directly)
        return None


def _execute(
    task: RunTask, progress: Progress | None, on_stage: OnStage | None
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    from heraldbench.platform.runner import simulate_run
    from heraldbench.platform.spec import parse_spec

    spec = parse_spec(task.spec)
    sched = spec.schedulers[0]
    if task.action == "place":
        from heraldbench.platform.placing import place_entry

        return _plain(place_entry(spec, 0)), {}
    if task.action == "train" and task.placed:
        return _train_placement(spec), {}
    _warm_up(spec, on_stage)
    if task.action == "train":
        return _train(task, spec, sched, progress)
    trace = spec.dataset.open()
    run = simulate_run(
        spec, sched, trace=trace, baseline_added=task.baseline_added, progress=progress
    )
    result = run.to_json(spec)
    if result.get("time") is None:
        result["time"] = _modelled_time(run.series, spec)
    result["cache_rows"] = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    result["dataset"] = trace.describe()
    return _plain(result), {k: np.asarray(v) for k, v in run.series.items()}


def _warm_up(spec: Any, on_stage: OnStage | None) -> None:
    """Compile what the run needs first, where this machine has not (platform.warmup)."""
    from heraldbench.platform.warmup import warm_up, warm_up_label

    def show(done: int, total: int, step: str) -> None:
        if on_stage is not None:
            on_stage(f"{warm_up_label(done, total)} ({step})" if done < total else None)

    warm_up([spec], show)


def _plain(document: dict[str, Any]) -> dict[str, Any]:
    """The document with numpy scalars and arrays as plain JSON values."""

    def convert(value: Any) -> Any:
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
        return str(value)

    return json.loads(json.dumps(document, default=convert))


def _modelled_time(series: dict[str, np.ndarray], spec: Any) -> dict[str, Any] | None:
    """Modelled time under every hardware profile (the report reads it)."""
    from heraldbench.platform.timemodel import model_times
    from heraldbench.platform.timeprofile import spec_profiles

    return model_times(
        series,
        workers=spec.cluster.workers,
        batch_size=spec.cluster.batch_size,
        embedding_dim=spec.embedding_dim,
        extra=spec_profiles(spec),
    )


def _train(
    task: RunTask, spec: Any, sched: Any, progress: Progress | None
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Train ``sched`` on the spec's trace with the platform's trainer (a DLRM in PyTorch).

    Torch gets the worker's threads (one per task slot), so that tasks sharing a machine do not
    oversubscribe its cores; on a GPU worker the task was given the ``GPU`` resource.
    """
    from heraldbench.platform.train import configure_threads
    from heraldbench.platform.training import train_run

    configure_threads(threads=_worker_threads())
    run = train_run(spec, sched, baseline_added=task.baseline_added, progress=progress)
    result = run.to_json(spec)
    result.pop("loss", None)  # the per-iteration loss is logged as a series
    return _plain(result), {k: np.asarray(v) for k, v in run.series.items()}


def _train_placement(spec: Any) -> dict[str, Any]:
    """Train the spec's one placement (``platform.placement_training``), torch on the worker's
    threads as a scheduler's training is."""
    from heraldbench.platform.placement_training import train_placement_entry
    from heraldbench.platform.train import configure_threads

    configure_threads(threads=_worker_threads())
    return _plain(train_placement_entry(spec))


def _worker_threads() -> int | None:
    try:
        from distributed import get_worker

        return int(get_worker().state.nthreads)
    except (ValueError, AttributeError):
        return None


class _Tracker:
    """The task's nested MLflow run; a logging failure is kept in the record, never raised."""

    def __init__(self, task: RunTask, record: RunRecord) -> None:
        self.task, self.record = task, record
        self.client = None
        if task.target is not None:
            self._guard(self._start, needs_run=False)

    def _guard(self, step, needs_run: bool = True) -> None:
        if self.task.target is None or (needs_run and self.client is None):
            return
        guarded(self.record, step)

    def _start(self) -> None:
        import mlflow
        from mlflow import MlflowClient

        target = self.task.target
        mlflow.set_tracking_uri(target.uri)
        tags = {
            "heraldbench.action": self.task.action,
            "heraldbench.point": self.task.point,
            "heraldbench.seed": str(self.task.seed),
            "heraldbench.scheduler": self.task.label,
            "heraldbench.paradigm": "placement" if self.task.placed else "scheduler",
            "heraldbench.key": self.task.key,
            "heraldbench.worker": str(self.record.worker),
        }
        self.client = MlflowClient(target.uri)
        earlier = _earlier_attempt(self.client, target, self.task.key)
        if earlier is not None:  # Dask re-ran the task after its worker died: same MLflow run
            run = mlflow.start_run(run_id=earlier, tags=tags)
        else:
            run = mlflow.start_run(
                parent_run_id=target.parent_run_id,
                experiment_id=target.experiment_id,
                run_name=self.task.run_name,
                tags=tags,
            )
        self.record.run_id = run.info.run_id
        spec = dict(self.task.spec)
        entry = ("placements", "placement.") if self.task.placed else ("schedulers", "scheduler.")
        params = {
            **flatten({k: v for k, v in spec.items() if k not in ("schedulers", "placements")}),
            **flatten(spec[entry[0]][0], entry[1]),
            "action": self.task.action,
        }
        log_params(self.client, run.info.run_id, params)
        mlflow.log_dict(spec, "spec.yaml")

    def log_result(self) -> None:
        self._guard(self._log_result)

    def _log_result(self) -> None:
        result, run_id = self.record.result or {}, self.record.run_id
        metrics = {
            **scalar_metrics(result.get("counts", {}), "counts"),
            **scalar_metrics(result.get("totals", {}), "totals"),
            **scalar_metrics(result.get("bytes", {}), "bytes"),
            **scalar_metrics(result.get("metrics") or {}, "accuracy"),
            **scalar_metrics((result.get("bound") or {}).get("gap", {}), "bound_gap"),
            **scalar_metrics(result, "run"),
            **scalar_metrics(result.get("bytes_per_iteration") or {}, "bytes_per_iteration"),
            **scalar_metrics(result.get("comm_ms_per_iteration") or {}, "comm_ms_per_iteration"),
        }
        for profile, estimate in (result.get("time") or {}).items():
            metrics.update(scalar_metrics(estimate, f"time/{profile}"))
        measured = result.get("measured") or {}  # a distributed training's measured figures
        metrics.update(scalar_metrics(measured, "measured"))
        metrics.update(scalar_metrics(measured.get("seconds", {}), "measured/seconds"))
        metrics.update(scalar_metrics(measured.get("bytes", {}), "measured/bytes"))
        stepped, stride = series_metrics(self.record.series, self.task.series_cap)
        log_metrics(self.client, run_id, metrics)
        log_metrics(self.client, run_id, stepped)
        if result.get("fallback"):  # a placement's plan is not the one it chose from the trace
            self.client.set_tag(run_id, "heraldbench.placement_fallback", result["fallback"])
        self.client.set_tag(run_id, "heraldbench.series_stride", str(stride))
        self._log_files()

    def _log_files(self) -> None:
        import mlflow

        from heraldbench.platform.report import plot_series

        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            _write_series_csv(self.record.series, folder / "iterations.csv")
            mlflow.log_artifact(str(folder / "iterations.csv"))
            if {"miss_pull", "evict_push"} <= set(self.record.series):
                plot_series({self.task.label: self.record.series}, folder / "series.png")
                mlflow.log_artifact(str(folder / "series.png"), artifact_path="plots")
        mlflow.log_dict(self.record.result, "result.json")

    def log_failure(self) -> None:
        self._guard(self._log_failure)

    def _log_failure(self) -> None:
        import mlflow

        self.client.set_tag(self.record.run_id, "heraldbench.error", self.record.error[:5000])
        mlflow.log_text(self.record.traceback or "", "error.txt")

    def end(self) -> None:
        if self.client is None:
            return
        import mlflow

        status = "FINISHED" if self.record.status == "finished" else "FAILED"
        try:
            mlflow.end_run(status=status)
        except Exception as exc:  # noqa: BLE001
            self.record.tracking_error = self.record.tracking_error or f"end_run: {exc}"


def _earlier_attempt(client: Any, target: Target, key: str) -> str | None:
    """The MLflow run that an earlier attempt of task ``key`` started, if any.

    Dask runs a task again when the worker running it dies (up to its allowed failures); the new
    attempt goes on in the run the first one left RUNNING instead of adding a second run for the
    same task. Keys are generated (letters, digits, dashes), so they need no quoting.
    """
    runs = client.search_runs(
        [target.experiment_id],
        filter_string=(
            f"tags.`heraldbench.key` = '{key}' "
            f"and tags.`mlflow.parentRunId` = '{target.parent_run_id}'"
        ),
        max_results=1,
    )
    return runs[0].info.run_id if runs else None


def _write_series_csv(series: dict[str, np.ndarray], path: Path) -> None:
    names = list(series)
    if not names:
        path.write_text("iteration\n")
        return
    table = np.column_stack([np.arange(len(series[names[0]]))] + [series[n] for n in names])
    np.savetxt(
        path,
        table,
        delimiter=",",
        header=",".join(["iteration", *names]),
        comments="",
        fmt=["%d"] + ["%.10g"] * len(names),
    )
