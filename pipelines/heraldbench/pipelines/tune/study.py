"""The driver of a study: open (or resume) it, run its trials on Dask, summarise it.

The study lives in an Optuna RDB storage under its name. The driver creates it (or loads it:
a study is resumed by running it again under the same name, which adds ``tuning.trials`` more
trials), stores the problem it measures and refuses to resume it with a different one, has
naive's baseline traffic measured once (a Dask task) when a metric needs it, then submits one
Dask task per trial (:func:`~heraldbench.pipelines.tune.trial.run_trial`), at most
``tuning.parallel`` at once (default: every worker thread). Each task loads the study by name.
At the end the driver reads the whole study back and writes its tables and plots.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import Any

from heraldbench.pipelines.cluster import gpu_workers
from heraldbench.pipelines.tracking import Target, flatten, home, tracking_uri
from heraldbench.pipelines.tune import study_log
from heraldbench.pipelines.tune.measure import baseline, metric_key
from heraldbench.pipelines.tune.plots import history_png, importances_png, pareto_png
from heraldbench.pipelines.tune.results import TrialRow, best_rows, rows_of, write_tables
from heraldbench.pipelines.tune.space import (
    default_storage,
    open_storage,
    problem_document,
    redact,
    tuning_spec,
)
from heraldbench.pipelines.tune.trial import KEY_ATTR, TrialJob, TrialOutcome, run_trial
from heraldbench.platform.exceptions import SpecError

__all__ = ["StudyOutcome", "tune_study"]

STUDY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")
PROBLEM_ATTR = "heraldbench.problem"
BASELINE_ATTR = "heraldbench.baseline"
TRACK_ENV = "HERALDBENCH_TRACK"

#: Called with each trial's outcome as its task ends.
OnTrial = Callable[[TrialOutcome], None]


@dataclass
class StudyOutcome:
    """A study after a run: all its trials (``rows``), those this run added, the best."""

    name: str
    storage: str
    objectives: list[str]
    directions: list[str]
    rows: list[TrialRow]
    added: list[TrialOutcome]
    best: list[TrialRow]
    trials_before: int = 0
    plots: dict[str, Path] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)
    out_dir: Path | None = None
    target: Target | None = None
    seconds: float = 0.0

    def url(self) -> str | None:
        return self.target.url() if self.target is not None else None

    def summary(self) -> dict[str, Any]:
        """The study as JSON (the service stores this on the study's row)."""
        return {
            "name": self.name,
            "storage": self.storage,
            "objectives": self.objectives,
            "directions": self.directions,
            "trials_before": self.trials_before,
            "added": [o.number for o in self.added],
            "trials": [row.to_json() for row in self.rows],
            "best": [row.best_json() for row in self.best],
            "plots": {name: str(path) for name, path in self.plots.items()},
            "files": {name: str(path) for name, path in self.files.items()},
            "mlflow": self.url(),
            "mlflow_run": None if self.target is None else {
                "uri": self.target.uri,
                "experiment_id": self.target.experiment_id,
                "run_id": self.target.parent_run_id,
            },
            "seconds": round(self.seconds, 3),
        }


def tune_study(
    document: dict[str, Any],
    *,
    client: Any,
    storage: str | None = None,
    study_name: str | None = None,
    trials: int | None = None,
    track: bool | None = None,
    uri: str | None = None,
    out_dir: Path | None = None,
    on_trial: OnTrial | None = None,
    stop: str | None = None,
) -> StudyOutcome:
    """Run (or resume) the study of ``document`` on ``client``'s cluster.

    Args:
        document: a spec with a ``tuning`` section.
        storage: Optuna RDB URL (default :func:`default_storage`).
        study_name: default ``tuning.study``, else the spec's name.
        trials: trials to add (default ``tuning.trials``).
        track: log to MLflow (default: unless ``HERALDBENCH_TRACK=false``), at ``uri``.
        out_dir: tables and plots (default ``$HERALDBENCH_HOME/studies/<name>``).
        stop: a Dask ``Event`` name; once it is set, no trial starts and running ones stop
            between iterations (the service's cancel).

    Raises:
        SpecError: the spec is invalid, or the stored study measures another problem.
    """
    started = time.perf_counter()
    spec = tuning_spec(document)
    storage = storage or default_storage()
    name = study_name or spec.tuning.study or spec.name
    if not STUDY_NAME.fullmatch(name):  # it names a folder too
        raise SpecError(f"study name: letters, digits, '_', '.', '-' only (got {name!r})")
    study = _open_study(storage, name, spec)
    before = len(study.get_trials(deepcopy=False))
    tracked = _tracking_on() if track is None else track
    target = (
        study_log.open_parent(study, spec, name, storage, uri or tracking_uri())
        if tracked
        else None
    )
    try:
        base = _baseline(client, study, spec)
        jobs = _jobs(spec, storage, name, base, target, before, trials or spec.tuning.trials)
        jobs = [replace(job, stop=stop) for job in jobs]
        added = _run_jobs(client, study, jobs, _parallel(client, spec), spec.mode, on_trial, stop)
        outcome = _summarise(study, spec, name, storage, out_dir, before, added, target)
        outcome.seconds = time.perf_counter() - started
        if target is not None:
            study_log.close_parent(outcome, spec.model_dump(mode="json"))
    except BaseException:
        if target is not None:
            study_log.abort_parent(target)
        raise
    return outcome


def _tracking_on() -> bool:
    return os.environ.get(TRACK_ENV, "true").strip().lower() not in ("0", "false", "no", "off")


def _open_study(storage: str, name: str, spec: Any) -> Any:
    """The study, created or loaded; a loaded one must measure the same problem."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        storage=open_storage(storage),
        study_name=name,
        directions=spec.tuning.directions,
        load_if_exists=True,
    )
    problem = problem_document(spec)
    stored = study.user_attrs.get(PROBLEM_ATTR)
    if stored is None and study.get_trials(deepcopy=False):
        raise SpecError(f"tuning.study: {name!r} in {redact(storage)} is not a heraldbench study")
    if stored is not None and stored != problem:
        raise SpecError(
            f"tuning.study: {name!r} in {redact(storage)} measures another problem "
            f"({_differences(stored, problem)}); resume it with the same spec, or give the "
            "study a new name (tuning.study or --study)"
        )
    if stored is None:
        study.set_user_attr(PROBLEM_ATTR, problem)
    names = [metric_key(o) for o in spec.tuning.objectives]
    if study.metric_names != names:  # Optuna's plots and dashboards name the objectives
        with warnings.catch_warnings():  # experimental since Optuna 3.2, stable in use
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names(names)
    return study


def _differences(stored: dict[str, Any], problem: dict[str, Any], limit: int = 4) -> str:
    then, now = flatten(stored), flatten(problem)
    changed = sorted(k for k in then.keys() | now.keys() if then.get(k) != now.get(k))
    shown = [f"{k}: {then.get(k, '-')} then, {now.get(k, '-')} now" for k in changed[:limit]]
    return "; ".join(shown) + (f"; {len(changed) - limit} more" if len(changed) > limit else "")


def _baseline(client: Any, study: Any, spec: Any) -> dict[str, float] | None:
    """Naive's traffic with the spec's own cache, measured once per study (a Dask task)."""
    refs = [*spec.tuning.objectives, *spec.tuning.constraints]
    if not any(ref.metric == "traffic" for ref in refs):
        return None
    known = study.user_attrs.get(BASELINE_ATTR)
    if known is not None:
        return known
    document = spec.model_dump(mode="json", exclude={"tuning"})
    key = f"heraldbench-tune-baseline-{uuid.uuid4().hex[:8]}"
    found = client.submit(baseline, document, key=key, pure=False).result()
    study.set_user_attr(BASELINE_ATTR, found)
    return found


def _jobs(spec, storage, name, base, target, before: int, count: int) -> list[TrialJob]:
    """One job per trial; task i seeds its sampler with seed + trials before + i, so that no
    two tasks of the study draw the same random sequence."""
    token = uuid.uuid4().hex[:8]
    document = spec.model_dump(mode="json")
    return [
        TrialJob(
            key=f"heraldbench-trial-{token}-{i:05d}",
            storage=storage,
            study_name=name,
            document=document,
            seed=spec.tuning.sampler.seed + before + i,
            baseline=base,
            target=target,
        )
        for i in range(count)
    ]


def _parallel(client: Any, spec: Any) -> int:
    if spec.tuning.parallel is not None:
        return spec.tuning.parallel
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    return max(1, sum(int(w.get("nthreads", 1)) for w in workers))


def _run_jobs(client, study, jobs: list[TrialJob], parallel: int, mode: str,
              on_trial: OnTrial | None, stop: str | None = None) -> list[TrialOutcome]:  # fmt: skip
    """Keep ``parallel`` trial tasks in flight (none new once ``stop`` is set); outcomes in
    completion order."""
    from distributed import Event, as_completed

    stopped = Event(stop, client=client).is_set if stop is not None else (lambda: False)
    gpu = {"GPU": 1} if mode == "train" and gpu_workers(client) else None
    pending = iter(jobs)

    def submit(job: TrialJob) -> Any:
        return client.submit(run_trial, job, key=job.key, pure=False, resources=gpu)

    running = {submit(job): job for job in islice(pending, parallel)}
    flow = as_completed(list(running))
    outcomes = []
    try:
        for future in flow:
            outcome = _collect(future, running.pop(future), study)
            outcomes.append(outcome)
            if on_trial is not None:
                on_trial(outcome)
            following = None if stopped() else next(pending, None)
            if following is not None:
                new = submit(following)
                running[new] = following
                flow.add(new)
    except BaseException:  # interrupted: stop the trials in flight, and fail them in the study
        client.cancel(list(running))
        _fail_running(study, {job.key for job in running.values()})
        raise
    return outcomes


def _collect(future: Any, job: TrialJob, study: Any) -> TrialOutcome:
    """The task's outcome; a task that never returned fails its trial (found by its key)."""
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - the worker died or the task was lost
        outcome = TrialOutcome(job.key, error=f"the trial task did not return: {exc!r}")
    outcome.number = next(iter(_fail_running(study, {job.key})), None)
    return outcome


def _fail_running(study: Any, keys: set[str]) -> list[int]:
    """Tell FAIL for the running trials of the tasks ``keys`` (else they stay RUNNING)."""
    from optuna.trial import TrialState

    failed = []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if trial.user_attrs.get(KEY_ATTR) in keys:
            with contextlib.suppress(Exception):  # finished meanwhile, or the storage is gone
                study.tell(trial.number, state=TrialState.FAIL)
                failed.append(trial.number)
    return failed


def _summarise(study, spec, name, storage, out_dir, before, added, target) -> StudyOutcome:
    rows = rows_of(study)
    objectives = [metric_key(o) for o in spec.tuning.objectives]
    directions = spec.tuning.directions
    folder = out_dir or _default_out(name)
    best = best_rows(rows, directions)
    outcome = StudyOutcome(
        name=name, storage=redact(storage), objectives=objectives, directions=directions,
        rows=rows, added=added, best=best, trials_before=before, out_dir=folder, target=target,
    )  # fmt: skip
    outcome.files = write_tables(rows, best, objectives, folder)
    outcome.plots = _plots(study, spec, rows, objectives, folder / "plots", name)
    return outcome


def _plots(study, spec, rows, objectives, folder: Path, name: str) -> dict[str, Path]:
    directions = spec.tuning.directions
    plots = {"history": history_png(rows, objectives, directions, folder / "history.png",
                                    f"{name}: optimisation history")}  # fmt: skip
    seed = spec.tuning.sampler.seed
    importances = importances_png(study, objectives, seed, folder / "importances.png",
                                  f"{name}: parameter importances")  # fmt: skip
    if importances is not None:
        plots["importances"] = importances
    if len(objectives) > 1:
        colour = _colour_param(spec)
        plots["pareto"] = pareto_png(
            rows, objectives, directions, folder / "pareto.png", colour_by=colour,
            log_colour=bool(colour and spec.tuning.space[colour].log), title=name,
        )  # fmt: skip
    return plots


def _colour_param(spec: Any) -> str | None:
    """A scheduler knob searched over numbers colours the Pareto plot (else any such param)."""
    numeric = [n for n, r in spec.tuning.space.items() if r.kind != "categorical"]
    knobs = [n for n in numeric if n.startswith("scheduler.")]
    return (knobs or numeric or [None])[0]


def _default_out(name: str) -> Path:
    """``studies/<name>`` in the project data folder (where the service serves plots from)."""
    return home() / "studies" / name
