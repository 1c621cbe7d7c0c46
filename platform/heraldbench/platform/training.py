"""Train every scheduler of a spec on the same split, side by side (``heraldbench train``).

Beside :mod:`~heraldbench.platform.runner` (its simulating twin), above both trainers: a spec's
``train.backend`` picks the emulated trainer (:mod:`~heraldbench.platform.train`) or the
distributed one (:mod:`~heraldbench.platform.distributed`), and each run's figures are filled in
against naive's as the runner fills a simulation's.

Each run reports the simulator's counters (counted from the rows the executor moved), the
held-out AUC, log loss and accuracy, their difference from naive's, and the training throughput.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

from heraldbench.platform.data import SampleChunk, TraceSource
from heraldbench.platform.runner import (
    ExperimentResult,
    ProgressFactory,
    RunResult,
    fill_relative,
    run_fields,
)
from heraldbench.platform.schedulers import BASELINE, SchedulerSpecBase, from_spec
from heraldbench.platform.spec import ExperimentSpec, TrainSpec, scheduler_specs
from heraldbench.platform.train.loop import TrainOutcome, train_scheduler
from heraldbench.platform.train.metrics import Evaluation
from heraldbench.platform.train.runtime import configure_threads
from heraldbench.platform.train.split import training_split

__all__ = ["TrainRunResult", "train_experiment", "train_run", "training_table"]

METRICS = ("auc", "logloss", "accuracy")


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else value


@dataclass
class TrainRunResult(RunResult):
    """A :class:`RunResult` with the trained model's quality and the run's throughput."""

    metrics: dict[str, float] = field(default_factory=dict)
    metrics_vs_naive: dict[str, float | None] = field(default_factory=dict)
    samples_per_second: float = 0.0
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    timing: dict[str, float] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)
    measured: dict[str, Any] = field(default_factory=dict)
    outcome: TrainOutcome | None = field(default=None, repr=False)

    def to_json(self, spec: ExperimentSpec) -> dict[str, Any]:
        return super().to_json(spec) | {
            "metrics": {name: _finite(value) for name, value in self.metrics.items()},
            "metrics_vs_naive": self.metrics_vs_naive,
            "samples_per_second": round(self.samples_per_second, 1),
            "evaluations": [
                {k: _finite(v) if isinstance(v, float) else v for k, v in e.items()}
                for e in self.evaluations
            ],
            "timing": {name: round(value, 4) for name, value in self.timing.items()},
            "training": self.training,
            "loss": [round(float(x), 6) for x in self.series.get("loss", [])],
        } | ({"measured": self.measured} if self.measured else {})


def train_run(
    spec: ExperimentSpec,
    sched_spec: SchedulerSpecBase,
    *,
    split: tuple[TraceSource, SampleChunk] | None = None,
    progress: Callable[[int, int], None] | None = None,
    baseline_added: bool = False,
    on_evaluation: Callable[[Evaluation], None] | None = None,
) -> TrainRunResult:
    """Train under one scheduler of ``spec``; relative figures are filled in by the caller.

    ``on_evaluation`` sees each ``eval_interval`` evaluation (see :func:`train_scheduler`).
    """
    settings = spec.train or TrainSpec()
    if settings.backend == "distributed":
        from heraldbench.platform.distributed import train_distributed

        index = [s for s, _ in scheduler_specs(spec)].index(sched_spec)
        outcome = train_distributed(spec, [index], progress=progress)[0]
        return run_result(sched_spec, outcome, outcome.info["held_out_samples"], baseline_added)
    if split is None:
        split = training_split(spec, spec.dataset.open())
    train_trace, held_out = split
    cache_rows = spec.cache.resolve_rows(train_trace.layout.total_rows, spec.embedding_dim)
    scheduler = from_spec(
        sched_spec, workers=spec.cluster.workers, batch_size=spec.cluster.batch_size, seed=spec.seed
    )
    outcome = train_scheduler(
        train_trace, held_out, scheduler, cache_rows=cache_rows, embedding_dim=spec.embedding_dim,
        settings=settings, policy=spec.cache.policy, consistency=spec.consistency,
        progress=progress, on_evaluation=on_evaluation, dtype=torch_dtype(settings),
    )  # fmt: skip
    return run_result(sched_spec, outcome, len(held_out), baseline_added)


def torch_dtype(settings: TrainSpec):
    """The torch dtype of ``train.dtype``."""
    import torch

    return torch.float64 if settings.dtype == "float64" else torch.float32


def run_result(sched_spec: SchedulerSpecBase, outcome: TrainOutcome, held_out_samples: int,
               baseline_added: bool) -> TrainRunResult:  # fmt: skip
    """The :class:`TrainRunResult` of one trained scheduler."""
    info = {k: v for k, v in outcome.info.items() if k not in ("measured", "held_out_samples")}
    # info["trace"]: the training trace a distributed run's ranks split (train_experiment)
    return TrainRunResult(
        **run_fields(sched_spec, outcome, baseline_added),
        wall_seconds=outcome.timing["train"],
        metrics=outcome.final.metrics(),
        samples_per_second=outcome.samples_per_second,
        evaluations=[e.as_dict() for e in outcome.evaluations],
        timing=outcome.timing,
        training={
            "device": outcome.device,
            "samples_trained": outcome.samples_trained,
            "held_out_samples": held_out_samples,
            "direct_transfers": outcome.direct_transfers,
            "stale_reads": outcome.stale_reads,
            "max_staleness": outcome.max_staleness,
            **info,
        },
        measured=outcome.info.get("measured", {}),
        outcome=outcome,
    )


def fill_metric_deltas(runs: list[TrainRunResult]) -> None:
    """Every run's AUC, log loss and accuracy minus naive's (the cost of relaxed schedules)."""
    baseline = next(r for r in runs if r.scheduler == BASELINE)
    for run in runs:
        run.metrics_vs_naive = {
            name: _finite(run.metrics[name] - baseline.metrics[name]) for name in METRICS
        }


def train_experiment(
    spec: ExperimentSpec,
    *,
    trace: TraceSource | None = None,
    progress: ProgressFactory | None = None,
    scheduler_address: str | None = None,
) -> ExperimentResult:
    """Train under every scheduler of ``spec`` on one split; figures relative to naive.

    ``scheduler_address``: a distributed training's ranks run one per worker of that Dask
    cluster."""
    configure_threads()
    trace = trace if trace is not None else spec.dataset.open()
    if (spec.train or TrainSpec()).backend == "distributed":  # the ranks open and split it
        runs = _train_all_distributed(spec, progress, scheduler_address)
        described = runs[0].training["trace"]
    else:
        split = training_split(spec, trace)
        runs = [
            train_run(spec, sched_spec, split=split, baseline_added=added,
                      progress=progress(sched_spec.kind) if progress else None)  # fmt: skip
            for sched_spec, added in scheduler_specs(spec)
        ]
        described = split[0].describe()
    fill_relative(runs)  # type: ignore[arg-type]
    fill_metric_deltas(runs)
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    result = ExperimentResult(spec, described, cache_rows, runs)  # type: ignore[arg-type]
    if spec.placements:
        _add_placements(result, trace, runs)
    return result


def _add_placements(result: ExperimentResult, trace: TraceSource,
                    runs: list[TrainRunResult]) -> None:
    """The spec's placements counted and trained on the schedulers' training split."""
    from heraldbench.platform.placement_training import train_placements
    from heraldbench.platform.placing import place_spec

    split = training_split(result.spec, trace)
    naive = next(r for r in runs if r.scheduler == BASELINE)
    result.placements = place_spec(result.spec, split[0])
    result.placements_trained = train_placements(result.spec, split, naive.metrics)


def _train_all_distributed(spec: ExperimentSpec, progress: ProgressFactory | None,
                           address: str | None) -> list[TrainRunResult]:  # fmt: skip
    """Every scheduler of ``spec`` in one launch of the ranks (one process group)."""
    from heraldbench.platform.distributed import train_distributed

    listed = scheduler_specs(spec)
    report = progress("all schedulers") if progress else None
    outcomes = train_distributed(spec, list(range(len(listed))), progress=report,
                                 scheduler_address=address)  # fmt: skip
    return [run_result(s, o, o.info["held_out_samples"], added)
            for (s, added), o in zip(listed, outcomes, strict=True)]  # fmt: skip


def _fmt(value: float | None, digits: int = 3, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def training_table(result: ExperimentResult) -> Table:
    """Traffic relative to naive, held-out quality and its change against naive, throughput."""
    spec = result.spec
    settings = spec.train or TrainSpec()
    first = result.runs[0]
    device = getattr(first, "training", {}).get("device", "?")
    table = Table(
        title=f"{spec.name}: trained {settings.model} DLRM, {spec.cluster.workers} workers × "
        f"{spec.cluster.batch_size}, cache {result.cache_rows:,} rows ({spec.cache.policy}), "
        f"dim {spec.embedding_dim}, {device}",
    )
    for column in ("scheduler", "pull", "push", "overall", "AUC", "ΔAUC", "log loss", "Δlog loss",
                   "accuracy", "stale reads", "samples/s"):  # fmt: skip
        table.add_column(column, justify="left" if column == "scheduler" else "right")
    for run in result.runs:
        name = run.label or run.scheduler
        m, d = run.metrics, run.metrics_vs_naive  # type: ignore[attr-defined]
        table.add_row(
            name, _fmt(run.relative["pull"]), _fmt(run.relative["push"]),
            _fmt(run.relative["overall"]), _fmt(m["auc"], 4), _fmt(d["auc"], 4, True),
            _fmt(m["logloss"], 4), _fmt(d["logloss"], 4, True), _fmt(m["accuracy"], 4),
            f"{run.training['stale_reads']:,}",  # type: ignore[attr-defined]
            f"{run.samples_per_second:,.0f}",  # type: ignore[attr-defined]
        )  # fmt: skip
    return table
