"""A trial's nested MLflow run: params, metrics, evaluations, state.

Runs are created with ``MlflowClient`` and a ``mlflow.parentRunId`` tag (no fluent active run:
trials share worker threads and processes). Logging is best effort: a failure is kept on the
trial's outcome (``tracking_error``) and never fails the trial.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from heraldbench.pipelines.tracking import (
    flatten,
    guarded,
    log_metrics,
    log_params,
    scalar_metrics,
)

if TYPE_CHECKING:
    from heraldbench.pipelines.tune.trial import TrialJob, TrialOutcome

__all__ = ["TrialLog"]

_STATUS = {"COMPLETE": "FINISHED", "PRUNED": "KILLED", "FAIL": "FAILED"}


class TrialLog:
    """The MLflow run of trial ``number`` (nothing is logged when the job has no target)."""

    def __init__(self, job: TrialJob, number: int, outcome: TrialOutcome) -> None:
        self.job, self.number, self.outcome = job, number, outcome
        self.client: Any = None

    def _guard(self, step, *args: Any, needs_run: bool = True) -> None:
        """Run a logging step unless there is nothing to log to; keep its failure."""
        if self.job.target is None or (needs_run and self.client is None):
            return
        guarded(self.outcome, step, *args)

    def start(self, spec: Any, placed: bool = False) -> None:
        """The nested run, with the trial's effective spec and drawn values as params; its one
        tuned entry's knobs under ``placement.`` where the study tunes a placement (``placed``),
        else under ``scheduler.``."""
        self._guard(self._start, spec, placed, needs_run=False)

    def _start(self, spec: Any, placed: bool) -> None:
        from mlflow import MlflowClient

        target = self.job.target
        client = MlflowClient(target.uri)
        run = client.create_run(
            target.experiment_id,
            run_name=f"trial {self.number}",
            tags={
                "mlflow.parentRunId": target.parent_run_id,
                "heraldbench.kind": "trial",
                "optuna.study": self.job.study_name,
                "optuna.trial_number": str(self.number),
                "heraldbench.worker": str(self.outcome.worker),
                "heraldbench.key": self.job.key,
            },
        )
        self.client, self.outcome.run_id = client, run.info.run_id
        document = spec.model_dump(mode="json")
        tuned = "placements" if placed else "schedulers"
        params = {
            **flatten({k: v for k, v in document.items() if k not in ("schedulers", "placements")}),
            **flatten(document[tuned][0], tuned[:-1] + "."),
            **{name: str(value) for name, value in self.outcome.params.items()},
            "sampler.seed": str(self.job.seed),
        }
        log_params(client, run.info.run_id, params)
        client.log_dict(run.info.run_id, document, "spec.yaml")

    def evaluation(self, iteration: int, metrics: dict[str, float]) -> None:
        """A held-out evaluation during training, as stepped ``eval/<name>`` metrics."""
        self._guard(self._evaluation, iteration, metrics)

    def _evaluation(self, iteration: int, metrics: dict[str, float]) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        values = scalar_metrics(metrics, "eval")
        stepped = [Metric(name, value, now, iteration) for name, value in values.items()]
        log_metrics(self.client, self.outcome.run_id, stepped)

    def result(self, result: dict[str, Any]) -> None:
        """The run's metrics and its result document."""
        self._guard(self._result, result)

    def _result(self, result: dict[str, Any]) -> None:
        finite = {k: v for k, v in self.outcome.metrics.items() if math.isfinite(v)}
        log_metrics(self.client, self.outcome.run_id, finite)  # objectives under their names
        self.client.log_dict(self.outcome.run_id, _without_series(result), "result.json")

    def failure(self, trace: str) -> None:
        self._guard(self._failure, trace)

    def _failure(self, trace: str) -> None:
        run_id = self.outcome.run_id
        self.client.set_tag(run_id, "heraldbench.error", (self.outcome.error or "")[:5000])
        self.client.log_text(run_id, trace, "error.txt")

    def end(self) -> None:
        """Objective values, the trial's state and the run's status."""
        self._guard(self._end)

    def _end(self) -> None:
        run_id, outcome = self.outcome.run_id, self.outcome
        log_metrics(self.client, run_id, {"trial_seconds": outcome.seconds})
        self.client.set_tag(run_id, "optuna.state", outcome.state)
        self.client.set_tag(run_id, "heraldbench.feasible", str(outcome.feasible).lower())
        self.client.set_terminated(run_id, _STATUS[outcome.state])


def _without_series(result: dict[str, Any]) -> dict[str, Any]:
    """The run document without per-iteration lists (the loss series of a trained run)."""
    return {k: v for k, v in result.items() if not isinstance(v, list) or k == "evaluations"}
