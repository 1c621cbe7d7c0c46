"""Rows to response bodies: the figures derived on read (progress, relative, links) live here."""

from __future__ import annotations

from typing import Any

from heraldbench.api.core.config import Settings
from heraldbench.api.models import Dataset, Experiment, Run, Study
from heraldbench.api.results import (
    accuracy_metrics,
    mlflow_link,
    relative_figures,
    side_by_side_figures,
)
from heraldbench.api.schemas import (
    DatasetOut,
    ExperimentDetail,
    ExperimentSummary,
    Progress,
    RunOut,
    StudyOut,
    Trial,
)
from heraldbench.pipelines.grid import comparison_baseline

__all__ = ["dataset_out", "experiment_detail", "experiment_summary", "study_out"]


def experiment_summary(experiment: Experiment) -> ExperimentSummary:
    return ExperimentSummary(
        id=experiment.id,
        name=experiment.name,
        status=experiment.status,
        created_at=experiment.created_at,
        updated_at=experiment.updated_at,
        progress=Progress(done=experiment.runs_done, total=experiment.runs_total),
        mode=experiment.mode,
        schedulers=list(experiment.schedulers),
    )


def experiment_detail(experiment: Experiment, settings: Settings) -> ExperimentDetail:
    figures = relative_figures(experiment.runs)

    def link(run_id: str | None) -> str | None:
        return mlflow_link(
            settings.mlflow_ui_url, experiment.mlflow_uri, experiment.mlflow_experiment_id, run_id
        )

    compared = side_by_side_figures(experiment.runs, comparison_baseline(experiment.spec))
    runs = [_run_out(run, figures[run.id], link(run.mlflow_run_id), compared.get(run.id))
            for run in experiment.runs]
    summary = experiment_summary(experiment).model_dump()
    return ExperimentDetail(
        **summary,
        spec=experiment.spec,
        error=experiment.error,
        mlflow_url=link(experiment.mlflow_parent_run_id),
        tracking_error=experiment.tracking_error,
        runs=runs,
    )


def _run_out(run: Run, relative: dict[str, float | None], link: str | None,
             compared: dict[str, Any] | None = None) -> RunOut:
    result: dict[str, Any] = run.result or {}
    return RunOut(
        id=run.id,
        experiment_id=run.experiment_id,
        action=run.action,
        scheduler=run.scheduler,
        label=run.label,
        params=run.params,
        point=run.point,
        point_label=run.point_label,
        seed=run.seed,
        status=run.status,
        progress=run.progress,
        stage=run.stage,
        error=run.error,
        traceback=run.traceback,
        counts=result.get("counts"),
        totals=result.get("totals"),
        relative=relative,
        side_by_side=compared,
        bytes=result.get("bytes"),
        bound=result.get("bound"),
        time=result.get("time"),
        metrics=accuracy_metrics(result),
        series=run.series or {},
        iterations=result.get("iterations"),
        baseline_added=run.baseline_added,
        wall_seconds=run.wall_seconds,
        worker=run.worker,
        mlflow_run_url=link,
        tracking_error=run.tracking_error,
        started_at=run.started_at,
        finished_at=run.finished_at,
    )


def dataset_out(dataset: Dataset) -> DatasetOut:
    spec = (
        {"kind": "prepared", "path": dataset.prepared_path}
        if dataset.status == "succeeded"
        else None
    )
    return DatasetOut(
        id=dataset.id,
        name=dataset.name,
        kind=dataset.kind,
        path=dataset.path,
        status=dataset.status,
        stats=dataset.stats,
        prepared_path=dataset.prepared_path,
        spec=spec,
        error=dataset.error,
        created_at=dataset.created_at,
        updated_at=dataset.updated_at,
    )


def study_out(study: Study, settings: Settings) -> StudyOut:
    plots = {
        name: f"/api/studies/{study.id}/plots/{name}"
        if study.plots and study.plots.get(name)
        else None
        for name in ("history", "importances", "pareto")
    }
    tuning = (study.spec or {}).get("tuning") or {}
    objectives = [o if isinstance(o, str) else str(o.get("metric")) for o in
                  tuning.get("objectives") or []]  # fmt: skip
    return StudyOut(
        id=study.id,
        name=study.name,
        status=study.status,
        created_at=study.created_at,
        updated_at=study.updated_at,
        directions=list(study.directions),
        objectives=objectives,
        constraints=[_constraint(c) for c in tuning.get("constraints") or [] if isinstance(c, dict)],
        trials=[_trial(t, study.mlflow, settings) for t in study.trials or []],
        best=study.best or [],
        plots=plots,
        mlflow_url=_mlflow_url(study.mlflow, settings),
        error=study.error,
    )


def _mlflow_url(
    parent: dict[str, Any] | None, settings: Settings, run_id: str | None = None
) -> str | None:
    """A run of the study's MLflow experiment (default: its parent run) in the MLflow UI."""
    if not parent:
        return None
    return mlflow_link(
        settings.mlflow_ui_url, parent.get("uri"), parent.get("experiment_id"),
        run_id or parent.get("run_id"),
    )  # fmt: skip


def _trial(trial: dict[str, Any], parent: dict[str, Any] | None, settings: Settings) -> Trial:
    run_id = trial.get("mlflow_run_id")
    url = _mlflow_url(parent, settings, run_id) if run_id else None
    return Trial.model_validate({**trial, "mlflow_run_url": url})


def _constraint(constraint: dict[str, Any]) -> str:
    """``cache_memory <= 64MiB`` (and/or ``>= min``) as the spec states it."""
    parts = []
    if constraint.get("min") is not None:
        parts.append(f">= {constraint['min']}")
    if constraint.get("max") is not None:
        parts.append(f"<= {constraint['max']}")
    return f"{constraint.get('metric')} {' and '.join(parts)}".strip()
