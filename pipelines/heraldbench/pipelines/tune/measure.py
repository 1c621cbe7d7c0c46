"""What a trial measures: one run of the tuned scheduler (or placement), turned into the
study's metrics.

Every metric a scheduler trial can be scored or constrained on
(``heraldbench.platform.tuning.METRICS``) comes from the same run document
(``RunResult.to_json``):

* ``traffic`` = overall rows / the study's baseline overall rows, where the baseline is naive
  on the same trace with the spec's own cache, measured once per study (:func:`baseline`).
  In train mode both count the training part of the split only (the trainer's counters).
* ``time.<profile>`` = modelled mean iteration time in ms under each hardware profile;
  ``comm_time.<profile>`` its communication part.
* ``cache_memory`` = cache rows × ``embedding_dim`` × 4 bytes, in MiB, per worker.
* ``auc``, ``logloss``, ``accuracy`` = the trained model's held-out figures (train mode).

A placement trial's come from its placement's result (``placing.place_entry``): ``traffic`` =
bytes per iteration on both tiers / naive's overall bytes per iteration (the same baseline run),
``comm_time.<profile>``, ``device_memory`` (MiB on the fullest device) and ``load_balance``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from heraldbench.platform.data import TraceSource
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.spec import ExperimentSpec
from heraldbench.platform.tuning import MIB, TIMED, ConstraintSpec, ObjectiveSpec
from heraldbench.platform.units import BYTES_PER_VALUE

__all__ = ["Measurement", "baseline", "constraint_name", "measure", "measure_placement",
           "metric_key", "value_of"]

#: ``on_evaluation(iteration, {"auc": ..., "logloss": ..., "accuracy": ...})`` in train mode.
OnEvaluation = Callable[[int, dict[str, float]], None]


@dataclass(frozen=True)
class Measurement:
    """A trial's metrics by name, and the run document (``RunResult.to_json``) behind them."""

    metrics: dict[str, float]
    result: dict[str, Any]


def traffic_trace(spec: ExperimentSpec) -> TraceSource:
    """The samples whose traffic is counted: the whole trace, or in train mode the training part
    of the trainer's split (the same split as ``heraldbench.platform.training.train_run``)."""
    trace = spec.dataset.open()
    if spec.mode != "train":
        return trace
    from heraldbench.platform.train import training_split

    return training_split(spec, trace, read_held_out=False)[0]


def baseline(document: dict[str, Any]) -> dict[str, float]:
    """Naive's traffic on the study's trace with the spec's own cache (a Dask task)."""
    from heraldbench.platform.runner import simulate_run
    from heraldbench.platform.schedulers import NaiveSpec
    from heraldbench.platform.spec import parse_spec

    spec = parse_spec({**document, "lower_bound": False})
    trace = traffic_trace(spec)
    run = simulate_run(spec, NaiveSpec(), trace=trace)
    overall_bytes = run.counts.bytes(spec.embedding_dim)["overall"]
    return {
        **run.counts.totals(),
        "cache_rows": spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim),
        "samples": trace.num_samples,
        "bytes_per_iteration": overall_bytes / max(run.iterations, 1),
    }


def measure(
    spec: ExperimentSpec,
    base: dict[str, float] | None,
    on_evaluation: OnEvaluation | None = None,
    progress: Any = None,
) -> Measurement:
    """Run ``spec``'s only scheduler (simulated, or trained in train mode) and score it;
    ``progress(done, total)`` is called between iterations (it may raise to stop the run)."""
    sched = spec.schedulers[0]
    trace = spec.dataset.open()  # once: opening a raw file builds its vocabularies
    if spec.mode == "train":
        from heraldbench.platform.train import training_split
        from heraldbench.platform.training import train_run

        def report(evaluation: Any) -> None:
            if on_evaluation is not None:
                on_evaluation(evaluation.iteration, evaluation.metrics())

        split = training_split(spec, trace)
        run = train_run(spec, sched, split=split, on_evaluation=report, progress=progress)
    else:
        from heraldbench.platform.runner import simulate_run

        run = simulate_run(spec, sched, trace=trace, progress=progress)
    result = run.to_json(spec)
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    return Measurement(_metrics(spec, result, cache_rows, base), result)


def _metrics(
    spec: ExperimentSpec, result: dict[str, Any], cache_rows: int, base: dict[str, float] | None
) -> dict[str, float]:
    totals = result["totals"]
    metrics = {
        "cache_rows": float(cache_rows),
        "cache_memory": cache_rows * spec.embedding_dim * BYTES_PER_VALUE / MIB,
        "pull_rows": float(totals["pull"]),
        "push_rows": float(totals["push"]),
        "overall_rows": float(totals["overall"]),
    }
    if base is not None and base.get("overall"):
        metrics["traffic"] = totals["overall"] / base["overall"]
    iterations = max(int(result.get("iterations") or 0), 1)
    for profile, estimate in (result.get("time") or {}).items():
        metrics[f"time.{profile}"] = estimate["mean_iteration_s"] * 1000.0
        metrics[f"comm_time.{profile}"] = estimate["comm_s"] / iterations * 1000.0
    for name, value in (result.get("metrics") or {}).items():
        if value is not None:
            metrics[name] = float(value)
    return metrics


def measure_placement(spec: ExperimentSpec, base: dict[str, float] | None) -> Measurement:
    """Place and count ``spec``'s only placement on its trace, and score it.

    Raises:
        SpecError: the drawn knobs give a plan that does not fit the devices' memory (the
            trial fails with that message).
    """
    from heraldbench.platform.placing import place_entry

    result = place_entry(spec, 0)
    per_iteration = sum(result["bytes_per_iteration"].values())
    metrics = {
        "intra_host_mb_per_iteration": result["bytes_per_iteration"]["intra_host"] / 1e6,
        "inter_host_mb_per_iteration": result["bytes_per_iteration"]["inter_host"] / 1e6,
        "device_memory": result["device_memory_max_bytes"] / MIB,
        "load_balance": float(result["load_balance"]),
        **{f"comm_time.{p}": ms for p, ms in result["comm_ms_per_iteration"].items()},
    }
    if base is not None and base.get("bytes_per_iteration"):
        metrics["traffic"] = per_iteration / base["bytes_per_iteration"]
    return Measurement(metrics, result)


def metric_key(ref: ObjectiveSpec | ConstraintSpec) -> str:
    """The metric's name among a trial's metrics: ``traffic``, ``time.tcp-100g``, ..."""
    return f"{ref.metric}.{ref.profile}" if ref.metric in TIMED else ref.metric


def value_of(ref: ObjectiveSpec | ConstraintSpec, metrics: dict[str, float]) -> float:
    """The value of an objective's or a constraint's metric; NaN or missing is an error."""
    key = metric_key(ref)
    value = metrics.get(key)
    if value is None or math.isnan(value):
        raise SpecError(f"the run did not measure {key} (got {value}); the trial cannot be scored")
    return value


def constraint_name(constraint: ConstraintSpec) -> str:
    """``auc >= 0.75``, ``cache_memory <= 256``: the constraint's key in the study."""
    metric = metric_key(constraint)
    bounds = [f">= {constraint.min:g}" if constraint.min is not None else ""]
    bounds.append(f"<= {constraint.max:g}" if constraint.max is not None else "")
    return " ".join([metric, *filter(None, bounds)])
