"""The study's parent run in MLflow: one per study, reopened when the study is resumed.

The parent is created on the study's first run, in the MLflow experiment named after the spec,
and its id is kept in the study's user attributes; a later run of the same study (same tracking
store) reopens it, so every trial of the study, old and new, is a nested run under one parent.
Its params are the study's problem (fixed for the study's life; MLflow params cannot change);
what changes from run to run goes in tags, metrics and artifacts: the best params (tags
``best.<param>`` for one objective), ``best.json``, ``trials.csv``, ``pareto.csv`` and the
plots under ``plots/``.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from heraldbench.pipelines.tracking import Target, flatten, log_metrics, log_params, open_experiment
from heraldbench.pipelines.tune.space import problem_document, redact

if TYPE_CHECKING:
    from heraldbench.pipelines.tune.study import StudyOutcome

__all__ = ["MLFLOW_ATTR", "abort_parent", "close_parent", "open_parent"]

#: The study's user attribute holding its parent run (uri, experiment id, run id).
MLFLOW_ATTR = "heraldbench.mlflow"


def _client(uri: str) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(uri)


def open_parent(study: Any, spec: Any, study_name: str, storage: str, uri: str) -> Target:
    """The study's parent run, reopened (status RUNNING) or created."""
    client = _client(uri)
    known = study.user_attrs.get(MLFLOW_ATTR) or {}
    if known.get("uri") == uri and _reopen(client, known["parent_run_id"]):
        return Target(uri, known["experiment_id"], known["parent_run_id"])
    experiment_id = open_experiment(client, spec.name, uri)
    run = client.create_run(
        experiment_id,
        run_name=f"study {study_name}",
        tags={
            "heraldbench.kind": "study",
            "optuna.study": study_name,
            "optuna.storage": redact(storage),
            "optuna.directions": ", ".join(spec.tuning.directions),
        },
    )
    run_id = run.info.run_id
    log_params(client, run_id, flatten(problem_document(spec)))
    study.set_user_attr(
        MLFLOW_ATTR, {"uri": uri, "experiment_id": experiment_id, "parent_run_id": run_id}
    )
    return Target(uri, experiment_id, run_id)


def _reopen(client: Any, run_id: str) -> bool:
    from mlflow.exceptions import MlflowException

    try:
        if client.get_run(run_id).info.lifecycle_stage != "active":
            return False
        client.update_run(run_id, status="RUNNING")
        return True
    except MlflowException:  # deleted, or another store under the same URI
        return False


def close_parent(outcome: StudyOutcome, document: dict[str, Any]) -> None:
    """Best params, tables, plots and counts on the parent run, which ends FINISHED."""
    target = outcome.target
    client = _client(target.uri)
    run_id = target.parent_run_id
    tuning = document.get("tuning", {})
    client.set_tag(run_id, "optuna.sampler", json.dumps(tuning.get("sampler") or {}))
    client.log_dict(run_id, document, "spec.yaml")
    for name, value in _best_tags(outcome).items():
        client.set_tag(run_id, name, value)
    log_metrics(client, run_id, _counts(outcome))
    if outcome.out_dir is not None:
        client.log_artifacts(run_id, str(outcome.out_dir))
    client.set_terminated(run_id, "FINISHED")


def _best_tags(outcome: StudyOutcome) -> dict[str, str]:
    """``best.<param>`` and ``best.<objective>`` of the best trial (one objective), or the
    size of the Pareto front (several; the front itself is ``pareto.csv``)."""
    if len(outcome.objectives) > 1:
        return {"pareto.size": str(len(outcome.best)), "pareto.trials": _numbers(outcome.best)}
    if not outcome.best:
        return {"best.trial": "none feasible"}
    best = outcome.best[0]
    tags = {f"best.{name}": str(value) for name, value in best.params.items()}
    tags[f"best.{outcome.objectives[0]}"] = f"{best.values[0]:.6g}"
    tags["best.trial"] = str(best.number)
    return tags


def _numbers(rows: list[Any]) -> str:
    return ", ".join(str(r.number) for r in rows)[:5000]


def _counts(outcome: StudyOutcome) -> dict[str, float]:
    states = [row.state for row in outcome.rows]
    metrics = {
        "trials": float(len(states)),
        "trials_complete": float(states.count("COMPLETE")),
        "trials_pruned": float(states.count("PRUNED")),
        "trials_failed": float(states.count("FAIL")),
        "pareto_size": float(len(outcome.best)),
    }
    if len(outcome.objectives) == 1 and outcome.best:
        metrics[f"best.{outcome.objectives[0]}"] = outcome.best[0].values[0]
    return metrics


def abort_parent(target: Target) -> None:
    """End the parent run as KILLED (the driver was interrupted or failed)."""
    with contextlib.suppress(Exception):  # already failing: keep the original error
        _client(target.uri).set_terminated(target.parent_run_id, "KILLED")
