"""The Dask task of a study: one trial, asked of and told to the shared Optuna storage.

The task loads the study by name from the RDB storage (nothing but the URL and the name travel
with it), asks for a trial with its own seeded sampler, runs the tuned scheduler (or places the
tuned placement) with the drawn values, tells Optuna the objective values (and constraint
values), and logs the trial as a nested MLflow run under the study's parent run. It never raises: a failure is told to Optuna as
a FAIL trial with its error in the trial's user attributes.
"""

from __future__ import annotations

import contextlib
import math
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from heraldbench.pipelines.tracking import Target
from heraldbench.pipelines.tune.measure import (
    constraint_name,
    measure,
    measure_placement,
    value_of,
)
from heraldbench.pipelines.tune.space import (
    make_pruner,
    make_sampler,
    open_storage,
    suggest,
    trial_document,
    tuning_spec,
)
from heraldbench.pipelines.tune.trial_log import TrialLog
from heraldbench.platform.tuning import tunes_placement

__all__ = ["KEY_ATTR", "TrialJob", "TrialOutcome", "run_trial"]

#: The user attribute naming the task that runs a trial (to fail it if its worker dies).
KEY_ATTR = "heraldbench.key"


@dataclass(frozen=True)
class TrialJob:
    """What a worker needs for one trial.

    Attributes:
        key: the Dask key of the task; also stored on the trial.
        storage: the Optuna RDB URL; study_name: the study in it.
        document: the study's spec (JSON, with its tuning section).
        seed: this task's sampler seed.
        baseline: naive's traffic for the ``traffic`` metric (None when no metric needs it).
        target: the study's MLflow parent run, or None.
        stop: the name of a Dask ``Event`` that, once set, stops the trial between iterations
            (a study cancelled by request), or None.
    """

    key: str
    storage: str
    study_name: str
    document: dict[str, Any]
    seed: int
    baseline: dict[str, float] | None
    target: Target | None
    stop: str | None = None


@dataclass
class TrialOutcome:
    """How a trial ended: ``state`` is COMPLETE, PRUNED or FAIL (Optuna's names)."""

    key: str
    number: int | None = None
    state: str = "FAIL"
    params: dict[str, Any] = field(default_factory=dict)
    values: list[float] | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    feasible: bool = True
    error: str | None = None
    worker: str | None = None
    run_id: str | None = None
    tracking_error: str | None = None
    seconds: float = 0.0


def run_trial(job: TrialJob) -> TrialOutcome:
    """Run one trial of the study; never raises (see the module docstring)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    started = time.perf_counter()
    outcome = TrialOutcome(job.key, worker=_worker_name())
    try:
        spec = tuning_spec(job.document)
        study, trial = _ask(job, spec)
    except Exception as exc:  # noqa: BLE001 - the storage could not give a trial
        outcome.error = f"{type(exc).__name__}: {exc}"
        return outcome
    outcome.number = trial.number
    log = TrialLog(job, trial.number, outcome)
    _evaluate(job, spec, study, trial, outcome, log)
    outcome.seconds = time.perf_counter() - started
    log.end()
    return outcome


def _ask(job: TrialJob, spec: Any) -> tuple[Any, Any]:
    """The study, loaded by name with this task's sampler and the pruner, and a new trial."""
    import optuna

    interval = spec.train.eval_interval if spec.train is not None else 0
    study = optuna.load_study(
        study_name=job.study_name,
        storage=open_storage(job.storage),
        sampler=make_sampler(spec.tuning.sampler, job.seed),
        pruner=make_pruner(spec.tuning.pruning, interval),
    )
    trial = study.ask()
    trial.set_user_attr(KEY_ATTR, job.key)
    return study, trial


def _evaluate(
    job: TrialJob, spec: Any, study: Any, trial: Any, outcome: TrialOutcome, log: TrialLog
) -> None:
    """Draw, run, score and tell; the outcome and the MLflow run follow the trial's state."""
    import optuna
    from optuna.trial import TrialState

    try:
        outcome.params = suggest(trial, spec.tuning)
        trial.set_user_attr("worker", outcome.worker)
        trial_spec = _trial_spec(spec, outcome.params)
        placed = tunes_placement(spec.tuning)
        log.start(trial_spec, placed)
        if outcome.run_id is not None:
            trial.set_user_attr("mlflow_run_id", outcome.run_id)
        _configure_threads(trial_spec)
        if placed:
            measurement = measure_placement(trial_spec, job.baseline)
        else:
            measurement = measure(
                trial_spec, job.baseline, _reporter(trial, spec, log), progress=stopper(job.stop)
            )
        outcome.metrics = measurement.metrics
        log.result(measurement.result)
        outcome.values = [value_of(o, outcome.metrics) for o in spec.tuning.objectives]
        outcome.feasible = _constrain(trial, spec, outcome.metrics)
        trial.set_user_attr("metrics", outcome.metrics)
        study.tell(trial, outcome.values)
        outcome.state = "COMPLETE"
    except optuna.TrialPruned:
        study.tell(trial, state=TrialState.PRUNED)
        outcome.state = "PRUNED"
    except Exception as exc:  # noqa: BLE001 - recorded on the trial, never lost
        outcome.error = f"{type(exc).__name__}: {exc}"
        log.failure(traceback.format_exc())
        _fail(study, trial, outcome.error)


class StudyCancelled(Exception):
    """Raised between iterations of a trial whose study was cancelled."""


def stopper(name: str | None, every: float = 0.5):
    """A progress callback raising :class:`StudyCancelled` once the Dask event ``name`` is set
    (looked at most every ``every`` seconds); None without an event."""
    if name is None:
        return None
    from distributed import Event

    event, checked = Event(name), [time.monotonic()]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - checked[0] < every:
            return
        checked[0] = now
        if event.is_set():
            raise StudyCancelled(f"the study was cancelled (event {name})")

    return progress


def _trial_spec(spec: Any, params: dict[str, Any]) -> Any:
    """The trial's own spec (one scheduler, the drawn values, no tuning section)."""
    from heraldbench.platform.spec import parse_spec

    return parse_spec(trial_document(spec, params))


def _reporter(trial: Any, spec: Any, log: Any):
    """Train mode: report the objective at each evaluation and stop when the pruner says so."""
    import optuna

    objective = spec.tuning.objectives[0].metric
    pruning = spec.tuning.pruning.kind != "none"

    def report(iteration: int, metrics: dict[str, float]) -> None:
        log.evaluation(iteration, metrics)
        value = metrics.get(objective)
        if not pruning or value is None or math.isnan(value):  # NaN: nothing to compare
            return
        trial.report(value, step=iteration)
        if trial.should_prune():
            raise optuna.TrialPruned(f"pruned at iteration {iteration} ({objective} {value:.4f})")

    return report


def _constrain(trial: Any, spec: Any, metrics: dict[str, float]) -> bool:
    """Set each constraint's violation (<= 0 holds); True when all hold."""
    feasible = True
    for constraint in spec.tuning.constraints:
        violation = constraint.violation(value_of(constraint, metrics))
        trial.set_constraint(constraint_name(constraint), violation)
        feasible = feasible and violation <= 0
    return feasible


def _fail(study: Any, trial: Any, error: str) -> None:
    from optuna.trial import TrialState

    # If the storage is unreachable, the driver fails the trial by its key later.
    with contextlib.suppress(Exception):
        trial.set_user_attr("error", error[:2000])
        study.tell(trial, state=TrialState.FAIL)


def _configure_threads(spec: Any) -> None:
    """A trained trial gets the worker's threads, so trials sharing a machine do not
    oversubscribe its cores."""
    if spec.mode != "train":
        return
    from heraldbench.platform.train import configure_threads

    configure_threads(threads=_worker_threads())


def _worker_threads() -> int | None:
    try:
        from distributed import get_worker

        return int(get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):
        return None


def _worker_name() -> str | None:
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return None
