"""Run a (grid) spec on Dask and log it to MLflow.

Every (point, seed, scheduler) of the expanded spec is one Dask task (two with ``mode: train``:
simulated and trained); tasks open the trace themselves. The driver waits for them with a
progress callback, computes relative figures against naive of the same point and seed, logs
those to the runs, and gives the submission's parent run its summary, plots and report.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heraldbench.pipelines import submission_log as log
from heraldbench.pipelines.cluster import gpu_workers
from heraldbench.pipelines.grid import Grid, comparison_baseline, expand
from heraldbench.pipelines.relative import Group, baselines, group_of, relative_or_none
from heraldbench.pipelines.tasks import RunRecord, RunTask, run_task
from heraldbench.pipelines.tracking import SERIES_CAP, Target, tracking_uri
from heraldbench.platform.metrics import Counts
from heraldbench.platform.sidebyside import side_by_side

__all__ = ["Submission", "run_experiment"]

#: Called with each record as its task ends.
OnDone = Callable[[RunRecord], None]


@dataclass
class Submission:
    """A finished submission: the grid, every run's record and where it was logged."""

    grid: Grid
    records: list[RunRecord]
    target: Target | None = None
    report_files: list[Path] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> list[RunRecord]:
        return [r for r in self.records if r.status == "failed"]

    def groups(self, actions: tuple[str, ...] = ("simulate",)) -> dict[tuple[int, int],
                                                                      list[RunRecord]]:
        """Simulated records (or those of ``actions``) per (point, seed), in submission order."""
        groups: dict[tuple[int, int], list[RunRecord]] = {}
        for record in self.records:
            if record.task.action in actions:
                groups.setdefault((record.task.point_index, record.task.seed), []).append(record)
        return groups

    def comparisons(self) -> dict[tuple[int, int], list[dict[str, Any]]]:
        """Per (point, seed) with placements, the side-by-side rows of its finished simulated
        and placed records, relative to the spec's baseline (``platform.sidebyside``)."""
        baseline = comparison_baseline(self.grid.document)
        out = {}
        for key, records in self.groups(("simulate", "place")).items():
            done = [r for r in records if r.status == "finished"]
            if any(r.task.action == "place" for r in records):
                out[key] = side_by_side(
                    [r.result for r in done if r.task.action == "simulate"],
                    [r.result for r in done if r.task.action == "place"], baseline)
        return out

    def url(self, record: RunRecord | None = None) -> str | None:
        if self.target is None or (record is not None and record.run_id is None):
            return None
        return self.target.url(record.run_id if record else None)

    def to_json(self) -> dict[str, Any]:
        """Every run without its series: status, error, figures and MLflow link."""
        return {
            "experiment": {
                "name": self.grid.name,
                "spec": self.grid.document,
                "axes": {a.name: list(a.values) for a in self.grid.axes},
                "scheduler_axes": self.grid.scheduler_axes,
                "seeds": self.grid.seeds,
                "mlflow": self.url(),
                "seconds": round(self.seconds, 3),
            },
            "runs": [_record_json(r, self.url(r)) for r in self.records],
            "side_by_side": [{"point": point, "seed": seed, "rows": rows}
                             for (point, seed), rows in self.comparisons().items()],
        }


def _record_json(record: RunRecord, url: str | None) -> dict[str, Any]:
    task = record.task
    return {
        "key": task.key,
        "action": task.action,
        "label": task.label,
        "point": task.point,
        "seed": task.seed,
        "status": record.status,
        "error": record.error,
        "traceback": record.traceback,
        "mlflow_run_id": record.run_id,
        "mlflow_url": url,
        "worker": record.worker,
        "seconds": round(record.seconds, 3),
        "result": record.result,
    }


def run_experiment(
    document: dict[str, Any],
    *,
    client: Any,
    track: bool = True,
    uri: str | None = None,
    on_done: OnDone | None = None,
    report_dir: Path | None = None,
    series_cap: int = SERIES_CAP,
) -> Submission:
    """Expand ``document``, run every run on ``client``'s cluster and log to MLflow.

    Args:
        document: the (grid) spec as parsed from YAML or JSON.
        client: a :class:`distributed.Client`.
        track: log to MLflow (``uri``, default :func:`tracking_uri`).
        on_done: progress callback, called as each run ends.
        report_dir: also write the report (and ``results.json``) there.
        series_cap: stepped metrics per series at most (see :func:`series_metrics`).

    Raises:
        SpecError: the spec or one of its points is invalid (nothing is submitted).
    """
    started = time.perf_counter()
    grid = expand(document)
    target = log.open_submission(grid, uri or tracking_uri()) if track else None
    submission = Submission(grid, [], target)
    try:
        tasks = _tasks(grid, target, series_cap)
        submission.records = _gather(client, tasks, target, on_done)
        _fill_relative(submission.records)
        submission.seconds = time.perf_counter() - started
        submission.report_files = log.write_outputs(submission, report_dir)
        if target is not None:
            log.close_submission(submission)
    except BaseException:
        if target is not None:
            log.abort_submission(target)
        raise
    return submission


def _tasks(grid: Grid, target: Target | None, series_cap: int) -> list[RunTask]:
    token = uuid.uuid4().hex[:8]
    tasks = []
    for run in grid.runs:
        for action in run.actions:
            key = f"heraldbench-{token}-{len(tasks):05d}"
            tasks.append(RunTask.for_run(run, action, key, target, series_cap))
    return tasks


def _gather(client: Any, tasks: list[RunTask], target, on_done: OnDone | None) -> list[RunRecord]:
    """Submit every task and collect records in task order; a lost task becomes a failed record."""
    from distributed import as_completed

    gpu = {"GPU": 1} if any(t.action == "train" for t in tasks) and gpu_workers(client) else None
    futures = {
        client.submit(
            run_task,
            task,
            key=task.key,
            pure=False,
            resources=gpu if task.action == "train" else None,
        ): task
        for task in tasks
    }
    records: dict[str, RunRecord] = {}
    for future in as_completed(futures):
        task = futures[future]
        try:
            record = future.result()
        except Exception as exc:  # noqa: BLE001 - the worker died or the task was lost
            record = RunRecord(
                task,
                error=f"{type(exc).__name__}: {exc}",
                traceback=f"the task did not return: {exc!r}",
            )
            log.record_lost_run(target, record)
        records[task.key] = record
        if on_done:
            on_done(record)
    return [records[t.key] for t in tasks]


def _fill_relative(records: list[RunRecord]) -> None:
    """Relative pull / push / overall (and, for training, AUC etc. minus naive's) against naive
    of the same point, seed and action."""
    finished = [r for r in records if r.status == "finished" and r.task.action != "place"]
    counted = [r for r in finished if not r.task.placed]
    naive = baselines((_group(r), _kind(r), r) for r in counted)
    for r in finished:
        base = naive.get(_group(r))
        if r.task.placed:  # a trained placement: its quality against naive's, no counts
            r.result["metrics_vs_naive"] = _deltas(
                r.result.get("metrics") or {}, (base.result.get("metrics") or {}) if base else {}
            )
            continue
        r.result["relative"] = relative_or_none(
            Counts(**r.result["counts"]), Counts(**base.result["counts"]) if base else None
        )
        if r.task.action == "train":
            r.result["metrics_vs_naive"] = _deltas(
                r.result.get("metrics") or {}, (base.result.get("metrics") or {}) if base else {}
            )


def _group(record: RunRecord) -> Group:
    return group_of(record.task.point_index, record.task.seed, record.task.action)


def _deltas(metrics: dict[str, Any], baseline: dict[str, Any]) -> dict[str, float | None]:
    return {
        name: (
            value - baseline[name] if value is not None and baseline.get(name) is not None else None
        )
        for name, value in metrics.items()
    }


def _kind(record: RunRecord) -> str:
    return record.task.spec["schedulers"][0]["kind"]
