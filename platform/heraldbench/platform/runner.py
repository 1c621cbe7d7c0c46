"""Run every scheduler of a spec on the same trace and put the results side by side."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from heraldbench.platform.bounds import lower_bound
from heraldbench.platform.data import TraceSource
from heraldbench.platform.metrics import Counts, relative_to
from heraldbench.platform.placing import place_spec
from heraldbench.platform.schedulers import (
    BASELINE,
    RunPlan,
    Scheduler,
    SchedulerSpecBase,
    SyncRule,
    from_spec,
)
from heraldbench.platform.sidebyside import side_by_side
from heraldbench.platform.sim import simulate
from heraldbench.platform.spec import ExperimentSpec, scheduler_specs
from heraldbench.platform.timecheck import time_check
from heraldbench.platform.timemodel import model_times
from heraldbench.platform.timeprofile import spec_profiles

__all__ = [
    "ExperimentResult",
    "ProgressFactory",
    "RunResult",
    "fill_relative",
    "run_fields",
    "simulate_experiment",
    "simulate_run",
]

#: Builds a per-run progress callback (samples done, samples total) from a run label.
ProgressFactory = Callable[[str], Callable[[int, int], None]]


@dataclass
class RunResult:
    scheduler: str
    params: dict[str, Any]
    counts: Counts
    iterations: int
    samples_dropped: int
    wall_seconds: float
    series: dict[str, np.ndarray]
    relative: dict[str, float | None] = field(default_factory=dict)
    baseline_added: bool = False
    bound: dict[str, Any] | None = None
    label: str = ""
    #: What the scheduler made of the trace, where it reorders it (FAE: hot-input share, hot
    #: rows, hot and cold batches, samples dropped); None when it replays the trace as given.
    schedule: dict[str, Any] | None = None

    def to_json(self, spec: ExperimentSpec) -> dict[str, Any]:
        embedding_dim = spec.embedding_dim
        return {
            "scheduler": self.scheduler,
            "label": self.label or self.scheduler,
            "params": self.params,
            "counts": self.counts.as_dict(),
            "totals": self.counts.totals(),
            "relative": self.relative,
            "bytes": self.counts.bytes(embedding_dim),
            "iterations": self.iterations,
            "samples_dropped": self.samples_dropped,
            "wall_seconds": round(self.wall_seconds, 4),
            "accesses_per_second": (
                self.counts.accesses / self.wall_seconds if self.wall_seconds > 0 else None
            ),
            "baseline_added": self.baseline_added,
            "bound": self.bound,
            "schedule": self.schedule,
            "time": model_times(
                self.series,
                workers=spec.cluster.workers,
                batch_size=spec.cluster.batch_size,
                embedding_dim=embedding_dim,
                extra=spec_profiles(spec),
            ),
        }


@dataclass
class ExperimentResult:
    spec: ExperimentSpec
    dataset: dict[str, Any]
    cache_rows: int
    runs: list[RunResult]
    #: The spec's placements' results on the same trace (``placing.place_entry``).
    placements: list[dict[str, Any]] = field(default_factory=list)
    #: In a training, the spec's placements trained (``placement_training``).
    placements_trained: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        runs = [run.to_json(self.spec) for run in self.runs]
        check = time_check(runs)  # distributed runs on a measured profile: modelled vs measured
        rows = side_by_side(runs, self.placements, self.spec.baseline)
        return {
            "experiment": {
                "name": self.spec.name,
                "mode": self.spec.mode,
                "baseline": BASELINE,
                "cache_rows": self.cache_rows,
                "dataset": self.dataset,
                "spec": self.spec.model_dump(mode="json"),
            },
            "runs": runs,
            "placements": self.placements,
            "side_by_side": {"baseline": self.spec.baseline, "rows": rows},
        } | ({"time_check": check} if check is not None else {}) | (
            {"placements_trained": self.placements_trained} if self.placements_trained else {})


def simulate_run(
    spec: ExperimentSpec,
    sched_spec: SchedulerSpecBase,
    *,
    trace: TraceSource | None = None,
    progress: Callable[[int, int], None] | None = None,
    check_invariants: bool = False,
    baseline_added: bool = False,
) -> RunResult:
    """Simulate one scheduler of ``spec`` (relative figures are filled in by the caller)."""
    trace = trace if trace is not None else spec.dataset.open()
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    scheduler = from_spec(
        sched_spec, workers=spec.cluster.workers, batch_size=spec.cluster.batch_size, seed=spec.seed
    )
    plan = scheduler.plan_run(trace)
    with_bound = spec.lower_bound and _bound_applies(scheduler, plan, trace, spec)
    result = simulate(
        trace,
        scheduler,
        cache_rows=cache_rows,
        policy=spec.cache.policy,
        consistency=spec.consistency,
        check_invariants=check_invariants,
        record_partitions=with_bound,
        progress=progress,
        plan=plan,
    )
    bound = _bound(trace, scheduler, result, cache_rows) if with_bound else None
    return RunResult(
        **run_fields(sched_spec, result, baseline_added),
        wall_seconds=result.wall_seconds,
        bound=bound,
        schedule=_schedule_info(trace.describe(), result.info.get("trace")),
    )


def run_fields(sched_spec: SchedulerSpecBase, outcome: Any, baseline_added: bool
               ) -> dict[str, Any]:  # fmt: skip
    """What every run's result takes from its scheduler's spec and from what its executor
    reports (a simulation's ``SimResult`` or a training's ``TrainOutcome``)."""
    return {
        "scheduler": sched_spec.kind,
        "params": sched_spec.knobs(),
        "label": sched_spec.label(),
        "counts": outcome.counts,
        "iterations": outcome.iterations,
        "samples_dropped": outcome.samples_dropped,
        "series": outcome.series,
        "baseline_added": baseline_added,
    }


def _schedule_info(given: dict[str, Any], replayed: Any) -> dict[str, Any] | None:
    """The replayed trace's description where it differs from the trace the spec gave."""
    if not isinstance(replayed, dict):
        return None
    changed = {k: v for k, v in replayed.items() if k not in given or given[k] != v}
    return changed or None


def _bound_applies(scheduler: Scheduler, plan: RunPlan, trace: TraceSource,
                   spec: ExperimentSpec) -> bool:  # fmt: skip
    """The bound is for strict, demand-fetching schedulers whose every batch goes through the
    caches: relaxed reads (HET), replicated batches (FAE) and prefetching executors (BagPipe)
    are outside its premise, so no gap is reported for them."""
    return (
        plan.consistency_or(spec.consistency) == "strict"
        and plan.replays_trace
        and plan.trace is trace
        and scheduler.sync_policy.rule is not SyncRule.BOUNDED_STALENESS
    )


def _bound(trace: TraceSource, scheduler: Scheduler, result, cache_rows: int) -> dict[str, Any]:
    bound = lower_bound(
        trace,
        result.partitions,
        workers=scheduler.workers,
        batch_size=scheduler.batch_size,
        cache_rows=cache_rows,
    )
    gap = bound.gap(result.counts)
    if scheduler.sync_policy.direct:
        # The push bound counts write-backs through the PS; a direct transfer to the reader is
        # not one, so only the pull gap is meaningful.
        gap = {"pull": gap["pull"], "push": None, "overall": None}
    return {
        "pulls": bound.pulls,
        "pushes": bound.pushes,
        "flush": bound.flush,
        "compulsory_pulls": bound.compulsory_pulls,
        "coherence_pulls": bound.coherence_pulls,
        "gap": gap,
    }


def fill_relative(runs: list[RunResult]) -> None:
    """Set every run's relative figures against the naive run among them."""
    baseline = next(r for r in runs if r.scheduler == BASELINE)
    for run in runs:
        run.relative = relative_to(run.counts, baseline.counts)


def simulate_experiment(
    spec: ExperimentSpec,
    *,
    trace: TraceSource | None = None,
    progress: ProgressFactory | None = None,
    check_invariants: bool = False,
) -> ExperimentResult:
    """Simulate every scheduler of ``spec`` on one trace, and place its placements on it;
    relative figures are against naive, the side-by-side comparison against ``spec.baseline``."""
    trace = trace if trace is not None else spec.dataset.open()
    runs = [
        simulate_run(
            spec,
            sched_spec,
            trace=trace,
            progress=progress(sched_spec.kind) if progress else None,
            check_invariants=check_invariants,
            baseline_added=added,
        )
        for sched_spec, added in scheduler_specs(spec)
    ]
    fill_relative(runs)
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    return ExperimentResult(spec, trace.describe(), cache_rows, runs, place_spec(spec, trace))
