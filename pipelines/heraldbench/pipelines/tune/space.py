"""The study's problem as Optuna sees it: storage, sampler, pruner, and a trial's spec.

Optuna is imported inside functions: the API imports this package to validate a submission,
and needs no Optuna for that.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from heraldbench.pipelines.tracking import home
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.schedulers import BASELINE
from heraldbench.platform.spec import ExperimentSpec, parse_spec
from heraldbench.platform.tuning import PruningSpec, SamplerSpec, TuningSpec, tunes_placement
from heraldbench.platform.tuning_checks import tuned_entry, tuned_placement

__all__ = [
    "STORAGE_ENV",
    "default_storage",
    "make_pruner",
    "make_sampler",
    "open_storage",
    "problem_document",
    "redact",
    "suggest",
    "trial_document",
    "tuning_spec",
]

STORAGE_ENV = "HERALDBENCH_OPTUNA_STORAGE"
#: SQLite waits this long for a lock held by another trial's write (seconds).
_SQLITE_TIMEOUT = 60
#: Fields that may change between runs of one study: they decide how many trials run and how
#: the next ones are drawn, not what a trial measures.
_RESUMABLE = ("trials", "parallel", "sampler", "pruning", "study")


def default_storage() -> str:
    """``$HERALDBENCH_OPTUNA_STORAGE``, else ``optuna.db`` in the project data folder (not
    MLflow's database: both keep an ``alembic_version`` table)."""
    return os.environ.get(STORAGE_ENV) or f"sqlite:///{home() / 'optuna.db'}"


def redact(url: str) -> str:
    """The storage URL without its password (for logs, MLflow and the console)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy reads: show nothing of it
        return "<storage>"


def open_storage(url: str) -> Any:
    """Optuna's RDB storage at ``url`` (tables created on first use)."""
    import optuna

    engine_kwargs = (
        {"connect_args": {"timeout": _SQLITE_TIMEOUT}} if url.startswith("sqlite") else {}
    )
    try:
        return optuna.storages.RDBStorage(url, engine_kwargs=engine_kwargs)
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy and alembic raise many kinds
        raise SpecError(f"cannot open the Optuna storage {redact(url)}: {exc}") from None


def tuning_spec(document: dict[str, Any]) -> ExperimentSpec:
    """The validated spec; a study needs its ``tuning`` section."""
    spec = parse_spec(document)
    if spec.tuning is None:
        raise SpecError("tuning: a study needs a tuning section (space, objectives, trials)")
    return spec


def problem_document(spec: ExperimentSpec) -> dict[str, Any]:
    """What every trial of the study measures: the spec without its name and run settings.

    A study is resumed only with the same problem, so its trials stay comparable.
    """
    document = spec.model_dump(mode="json", exclude={"name"})
    for field in _RESUMABLE:
        document["tuning"].pop(field, None)
    return document


def suggest(trial: Any, tuning: TuningSpec) -> dict[str, Any]:
    """Draw every searched value for ``trial``, by name (``scheduler.lookahead``)."""
    params = {}
    for name, rng in tuning.space.items():
        if rng.kind == "categorical":
            params[name] = trial.suggest_categorical(name, rng.choices)
        elif rng.kind == "int":
            params[name] = trial.suggest_int(
                name, rng.low, rng.high, step=rng.step or 1, log=rng.log
            )
        else:
            params[name] = trial.suggest_float(
                name, float(rng.low), float(rng.high), step=rng.step, log=rng.log
            )
    return params


def trial_document(spec: ExperimentSpec, params: dict[str, Any]) -> dict[str, Any]:
    """The spec one trial runs: the tuned scheduler alone, with the drawn knobs and cache; or
    the tuned placement alone, with the drawn knobs (naive stays as the spec's one scheduler,
    not run: the trial places and counts).

    The lower bound is skipped (no objective uses it; it costs about one more pass).
    """
    document = spec.model_dump(mode="json", exclude={"tuning"})
    if tunes_placement(spec.tuning):
        placement = tuned_placement(spec).model_dump(mode="json")
        placement.update({name.partition(".")[2]: value for name, value in params.items()})
        document.update(schedulers=[{"kind": BASELINE}], placements=[placement],
                        baseline=BASELINE, lower_bound=False)  # fmt: skip
        return document
    scheduler = tuned_entry(spec).model_dump(mode="json")
    cache = copy.deepcopy(document["cache"])
    for name, value in params.items():
        group, _, field = name.partition(".")
        if group == "scheduler":
            scheduler[field] = value
        elif field == "policy":
            cache["policy"] = value
        else:  # one size replaces the spec's
            cache.update({"rows": None, "bytes": None, "ratio": None, field: value})
    document.update(schedulers=[scheduler], cache=cache, lower_bound=False)
    return document


def make_sampler(spec: SamplerSpec, seed: int) -> Any:
    """The sampler of one trial task (each task seeds its own: ``seed`` differs per task)."""
    import optuna

    if spec.kind == "tpe":  # Optuna 5: multivariate, constant liar (running trials count)
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=spec.startup_trials)
    if spec.kind == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=spec.population)
    return optuna.samplers.RandomSampler(seed=seed)


def make_pruner(spec: PruningSpec, eval_interval: int) -> Any:
    """Steps are training iterations; the first ``warmup_evaluations`` evaluations are safe."""
    import optuna

    if spec.kind == "none":
        return optuna.pruners.NopPruner()
    warmup = spec.warmup_evaluations * max(eval_interval, 1)
    if spec.kind == "median":
        return optuna.pruners.MedianPruner(
            n_startup_trials=spec.startup_trials, n_warmup_steps=warmup
        )
    return optuna.pruners.PercentilePruner(
        spec.percentile, n_startup_trials=spec.startup_trials, n_warmup_steps=warmup
    )
