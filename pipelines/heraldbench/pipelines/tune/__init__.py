"""Tuning: Optuna studies over a scheduler's knobs and cache size, trials on Dask, in MLflow.

A spec with a ``tuning`` section (:mod:`heraldbench.platform.tuning`) is a study: ``heraldbench
tune SPEC`` (or ``POST /api/studies``) runs ``tuning.trials`` trials as Dask tasks against a
shared Optuna RDB storage (SQLite by default, ``$HERALDBENCH_OPTUNA_STORAGE`` otherwise; never
MLflow's database), each task loading the study by name. Running the same study again resumes
it. Every trial is a nested MLflow run under the study's parent run, which gets the best params,
the Pareto front (several objectives) and the plots.

Modules: :mod:`.space` (storage, sampler, pruner, a trial's spec), :mod:`.measure` (what a
trial measures), :mod:`.trial` (the Dask task) and :mod:`.trial_log` (its MLflow run),
:mod:`.study` (the driver), :mod:`.study_log` (the parent run), :mod:`.results` (rows, best,
tables), :mod:`.plots`, :mod:`.console` (the command's output).

This package is the service's tuning pipeline: :func:`validate` and :func:`run_study` are the
interface ``heraldbench.api`` calls (see ``heraldbench/api/routes/studies.py``).
"""

from __future__ import annotations

from typing import Any

from heraldbench.pipelines.tune.space import default_storage, tuning_spec
from heraldbench.pipelines.tune.study import StudyOutcome, tune_study
from heraldbench.platform.exceptions import SpecError

__all__ = ["StudyOutcome", "default_storage", "run_study", "tune_study", "validate"]


def validate(document: Any) -> dict[str, Any]:
    """Check a spec with a tuning section; raise :class:`SpecError` naming each bad field.

    Returns ``{"name", "study", "directions", "objectives", "trials"}``.
    """
    if not isinstance(document, dict):
        raise SpecError(f"a spec must be a mapping of fields, got {type(document).__name__}")
    spec = tuning_spec(document)
    tuning = spec.tuning
    return {
        "name": spec.name,
        "study": tuning.study or spec.name,
        "directions": tuning.directions,
        "objectives": [o.metric for o in tuning.objectives],
        "trials": tuning.trials,
    }


def run_study(
    document: dict[str, Any], *, storage: str, study_name: str, client: Any, **options: Any
) -> dict[str, Any]:
    """Run the study on ``client``'s cluster and return its summary (JSON): ``trials``
    (``number``, ``state``, ``params``, ``values``, ...), ``best`` (``params``, ``values``) and
    ``plots`` (``history``, ``importances``, ``pareto``: file paths). ``options`` go to
    :func:`tune_study`."""
    outcome = tune_study(document, client=client, storage=storage, study_name=study_name, **options)
    return outcome.summary()
