"""The submission's side of MLflow and its local outputs: parent run, relative figures, report.

The driver opens the parent run before any task starts, and at the end logs to it: the
submitted spec, ``results.json`` (every run: status, error, figures, links), ``comparison.csv``,
``plots/relative.png`` (relative pull/push/overall per scheduler, one panel per point), and per
(point, seed) the report of :mod:`heraldbench.platform.report` (Table 1, comparison, charts) with
the per-iteration series of every scheduler.
"""

from __future__ import annotations

import contextlib
import csv
import json
import re
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heraldbench.pipelines.grid import Grid, comparison_baseline
from heraldbench.pipelines.plots import relative_png
from heraldbench.pipelines.tracking import Target, flatten, log_metrics, log_params, open_experiment

if TYPE_CHECKING:
    from heraldbench.pipelines.experiment import Submission
    from heraldbench.pipelines.tasks import RunRecord

__all__ = [
    "abort_submission",
    "close_submission",
    "open_submission",
    "record_lost_run",
    "write_outputs",
]


def _client(uri: str) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(uri)


def open_submission(grid: Grid, uri: str) -> Target:
    """Create the experiment if needed and the submission's parent run."""
    client = _client(uri)
    experiment_id = open_experiment(client, grid.name, uri)
    run = client.create_run(
        experiment_id,
        run_name=f"{grid.name} {time.strftime('%Y-%m-%d %H:%M:%S')}",
        tags={"heraldbench.kind": "submission", "heraldbench.runs": str(len(grid.runs))},
    )
    run_id = run.info.run_id
    document = {k: v for k, v in grid.document.items() if k != "schedulers"}
    params = {
        **flatten(document),
        "schedulers": json.dumps(grid.document.get("schedulers")),
        "grid.points": str(len(grid.points)),
        "grid.seeds": str(grid.seeds),
        "grid.axes": ", ".join(a.name for a in grid.axes) or "-",
        "grid.scheduler_axes": ", ".join(grid.scheduler_axes) or "-",
    }
    log_params(client, run_id, params)
    client.log_dict(run_id, grid.document, "spec.yaml")
    return Target(uri, experiment_id, run_id)


def write_outputs(submission: Submission, folder: Path | None) -> list[Path]:
    """Write results, comparison, plots and reports to ``folder`` and to the parent run.

    With no folder they go to the parent run only (through a temporary folder).
    """
    if folder is None and submission.target is None:
        return []
    if folder is None:
        with tempfile.TemporaryDirectory() as tmp:
            _write_and_log(submission, Path(tmp))
        return []
    folder.mkdir(parents=True, exist_ok=True)
    return _write_and_log(submission, folder)


def _write_and_log(submission: Submission, folder: Path) -> list[Path]:
    files = [
        _write_results(submission, folder / "results.json"),
        _write_comparison(submission, folder / "comparison.csv"),
        _relative(submission, folder),
    ]
    files += _reports(submission, folder)
    target = submission.target
    if target is not None:
        client = _client(target.uri)
        _log_relative(client, submission)
        client.log_artifacts(target.parent_run_id, str(folder))
    return [f for f in files if f is not None]


def _write_results(submission: Submission, path: Path) -> Path:
    path.write_text(json.dumps(submission.to_json(), indent=1, default=str))
    return path


def _write_comparison(submission: Submission, path: Path) -> Path:
    columns = [
        "point",
        "seed",
        "action",
        "scheduler",
        "status",
        "relative_pull",
        "relative_push",
        "relative_overall",
        "pull",
        "push",
        "overall",
        "seconds",
        "mlflow_url",
        "error",
    ]
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(columns)
        for record in submission.records:
            result, task = record.result or {}, record.task
            relative, totals = result.get("relative") or {}, result.get("totals") or {}
            writer.writerow(
                [
                    task.point,
                    task.seed,
                    task.action,
                    task.label,
                    record.status,
                    relative.get("pull"),
                    relative.get("push"),
                    relative.get("overall"),
                    totals.get("pull"),
                    totals.get("push"),
                    totals.get("overall"),
                    round(record.seconds, 3),
                    submission.url(record) or "",
                    record.error or "",
                ]
            )
    return path


def _relative(submission: Submission, folder: Path) -> Path | None:
    panels: dict[str, dict[str, list]] = {}
    for record in submission.records:
        relative = (record.result or {}).get("relative")
        if record.task.action == "simulate" and relative:
            panels.setdefault(record.task.point, {}).setdefault(record.task.label, []).append(
                relative
            )
    if not panels:
        return None
    seeds = len(submission.grid.seeds)
    title = f"{submission.grid.name}: traffic relative to naive" + (
        f" (mean over {seeds} seeds, whiskers min–max)" if seeds > 1 else ""
    )
    return relative_png(panels, folder / "plots" / "relative.png", title)


def _reports(submission: Submission, folder: Path) -> list[Path]:
    """The platform's report and the series plot per (point, seed)."""
    from heraldbench.platform.report import plot_series, write_report

    groups, compared = submission.groups(), submission.comparisons()
    baseline = comparison_baseline(submission.grid.document)
    written = []
    for (point, seed), records in groups.items():
        done = [r for r in records if r.status == "finished"]
        if not done:
            continue
        sub = (
            folder / "report"
            if len(groups) == 1
            else folder / "report" / f"point{point}-seed{seed}"
        )
        document = _result_document(submission.grid, done)
        if (point, seed) in compared:  # placements beside: side_by_side.md
            document["side_by_side"] = {"baseline": baseline, "rows": compared[point, seed]}
        written += write_report(document, sub)
        written.append(plot_series({r.task.label: r.series for r in done}, sub / "series.png"))
    return written


def _result_document(grid: Grid, records: list[RunRecord]) -> dict[str, Any]:
    """An ``ExperimentResult.to_json()``-shaped document of one point and seed."""
    first = records[0]
    spec = dict(first.task.spec)
    spec["schedulers"] = [r.task.spec["schedulers"][0] for r in records]
    experiment = {
        "name": grid.name,
        "mode": spec.get("mode"),
        "baseline": "naive",
        "cache_rows": first.result.get("cache_rows"),
        "point": first.task.point,
        "dataset": first.result.get("dataset", {}),
        "spec": spec,
    }
    return {
        "experiment": experiment,
        "runs": [{**r.result, "label": r.task.label} for r in records],
    }


def _log_relative(client: Any, submission: Submission) -> None:
    """Figures known only once naive of the same point and seed has run."""
    for record in submission.records:
        result = record.result or {}
        values = {
            f"relative/{k}": v for k, v in (result.get("relative") or {}).items() if v is not None
        }
        values |= {
            f"accuracy_vs_naive/{k}": v
            for k, v in (result.get("metrics_vs_naive") or {}).items()
            if v is not None
        }
        if record.run_id and values:
            log_metrics(client, record.run_id, values)


def summary_metrics(
    finished: int, failed: int, overall: dict[str, float | None], seconds: float | None = None
) -> dict[str, float]:
    """The parent run's metrics, named as the nested runs name the same figures:
    ``runs/finished``, ``runs/failed``, ``run/wall_seconds`` and, per scheduler label,
    ``relative/overall/<label>`` (the runs' ``relative/overall``). ``overall`` is empty for a
    grid (one figure per label would mix points)."""
    metrics = {"runs/finished": float(finished), "runs/failed": float(failed)}
    if seconds is not None:
        metrics["run/wall_seconds"] = seconds
    for label, value in overall.items():
        if value is not None:
            metrics[f"relative/overall/{_metric_name(label)}"] = value
    return metrics


def close_submission(submission: Submission) -> None:
    """Summary metrics on the parent run, which ends FINISHED (FAILED if no run finished)."""
    target = submission.target
    client = _client(target.uri)
    failed, total = len(submission.failed), len(submission.records)
    overall = {}
    if len(submission.groups()) == 1:
        for record in submission.records:
            overall[record.task.label] = ((record.result or {}).get("relative") or {}).get(
                "overall"
            )
    metrics = summary_metrics(total - failed, failed, overall, submission.seconds)
    log_metrics(client, target.parent_run_id, metrics)
    status = "FAILED" if total and failed == total else "FINISHED"
    client.set_terminated(target.parent_run_id, status)


def _metric_name(label: str) -> str:
    """A scheduler label as MLflow metric names allow (letters, digits, _ - . / and space)."""
    return re.sub(r"[^A-Za-z0-9_\-./ ]", "_", label)


def abort_submission(target: Target) -> None:
    """End the parent run as KILLED (the driver was interrupted or failed)."""
    with contextlib.suppress(Exception):  # already failing: keep the original error
        _client(target.uri).set_terminated(target.parent_run_id, "KILLED")


def record_lost_run(target: Target | None, record: RunRecord) -> None:
    """A task that never returned (its worker died) still gets a FAILED nested run."""
    if target is None:
        return
    try:
        client = _client(target.uri)
        run = client.create_run(
            target.experiment_id,
            run_name=record.task.run_name,
            tags={
                "mlflow.parentRunId": target.parent_run_id,
                "heraldbench.error": (record.error or "")[:5000],
                "heraldbench.key": record.task.key,
            },
        )
        client.set_terminated(run.info.run_id, "FAILED")
        record.run_id = run.info.run_id
    except Exception as exc:  # noqa: BLE001
        record.tracking_error = f"{type(exc).__name__}: {exc}"
