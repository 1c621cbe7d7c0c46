"""Compiling a spec's kernels before it runs: once per machine, in one process, with progress.

numba compiles a kernel at its first call and keeps the machine code in its on-disk cache
(beside the sources, or under ``NUMBA_CACHE_DIR``), from which later processes load it. On a
fresh checkout a run's first minutes are therefore spent compiling, in every worker process at
once and with nothing on the screen. :func:`warm_up` runs the specs in miniature first (each
dataset cut to a few iterations, read once, then every scheduler simulated on it, as a real run
does), so that every kernel they need is compiled once, in steps a terminal or the service can
show; the workers then load them. A stamp per (shape, scheduler) records that it was warmed on
these sources with this numba, so later runs skip the miniature.

Modelling assumption: the kernels' specialisations depend on a spec's shape (dataset kind,
workers, cache policy, consistency, lower bound) and its schedulers, never on its sizes; the
miniature keeps all of these and the table sizes, and changes only the number of samples.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform as machine
import sys
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

import numba

from heraldbench.platform.runner import simulate_run
from heraldbench.platform.schedulers import SchedulerSpecBase
from heraldbench.platform.spec import ExperimentSpec, scheduler_specs

__all__ = [
    "MINIATURE_ITERATIONS", "WarmUpProgress", "is_warm", "stamps_folder", "warm_up",
    "warm_up_label",
]  # fmt: skip

#: Called before each step with (steps done, steps in all, what the step compiles for).
WarmUpProgress = Callable[[int, int, str], None]
#: Iterations the miniature runs: enough for every scheduler's windows and phases to start.
MINIATURE_ITERATIONS = 8
_PACKAGE = Path(__file__).resolve().parent


def warm_up_label(done: int, total: int) -> str:
    """What a terminal or the service shows while :func:`warm_up` runs."""
    return f"compiling the simulator's kernels, once per machine: {done} of {total}"


def is_warm(spec: ExperimentSpec) -> bool:
    """Every scheduler of ``spec`` was warmed in a spec of its shape on these sources."""
    return all(_stamp(spec, s).exists() for s, _ in scheduler_specs(spec))


def warm_up(specs: Iterable[ExperimentSpec], progress: WarmUpProgress | None = None) -> int:
    """Compile what ``specs`` need by running their miniatures; returns the steps run (0 when
    every spec is warm). Specs of one shape share a miniature; nothing of it is kept but numba's
    cache and the stamps."""
    plans = _cold_miniatures(specs)
    total = sum(len(runs) + 1 for _, runs in plans)
    report = progress or (lambda done, total, step: None)
    done = 0
    for mini, runs in plans:
        report(done, total, f"reading {mini.dataset.kind}")
        trace = mini.dataset.open()
        for _ in trace.chunks(mini.cluster.workers * mini.cluster.batch_size):
            pass
        done += 1
        for sched_spec, added in runs:
            report(done, total, sched_spec.kind)
            simulate_run(mini, sched_spec, trace=trace, baseline_added=added)
            _write_stamp(mini, sched_spec)
            done += 1
    if total:
        report(total, total, "")
    return total


def _cold_miniatures(
    specs: Iterable[ExperimentSpec],
) -> list[tuple[ExperimentSpec, list[tuple[SchedulerSpecBase, bool]]]]:
    """One miniature per shape, with the schedulers not warmed yet, each once."""
    plans: dict[str, tuple[ExperimentSpec, dict[str, tuple[SchedulerSpecBase, bool]]]] = {}
    for spec in specs:
        _, runs = plans.setdefault(_shape_key(spec), (_miniature(spec), {}))
        for sched_spec, added in scheduler_specs(spec):
            if not _stamp(spec, sched_spec).exists():
                runs.setdefault(_scheduler_key(sched_spec), (sched_spec, added))
    return [(mini, list(runs.values())) for mini, runs in plans.values() if runs]


def _miniature(spec: ExperimentSpec) -> ExperimentSpec:
    """``spec`` cut to a few iterations of its dataset, its tables untouched."""
    samples = spec.cluster.workers * spec.cluster.batch_size * MINIATURE_ITERATIONS
    cut = {
        name: min(samples, getattr(spec.dataset, name) or samples)
        for name in ("samples", "max_samples")
        if name in type(spec.dataset).model_fields
    }
    return spec.model_copy(update={"dataset": spec.dataset.model_copy(update=cut)})


def _shape_key(spec: ExperimentSpec) -> str:
    """What the kernels' specialisations depend on besides the scheduler (module docstring)."""
    return json.dumps([
        spec.dataset.kind, spec.cluster.workers, spec.cache.policy, spec.consistency,
        spec.lower_bound,
    ])  # fmt: skip


def _scheduler_key(sched_spec: SchedulerSpecBase) -> str:
    return f"{sched_spec.kind}/{getattr(sched_spec, 'variant', '')}"


@cache
def _sources_key() -> str:
    """numba, Python, the machine, and each source file of the engine with its size and time,
    as numba's cache index keys a file (read once per process)."""
    files = [
        (str(path.relative_to(_PACKAGE)), path.stat().st_mtime_ns, path.stat().st_size)
        for path in sorted(_PACKAGE.rglob("*.py"))
    ]
    return json.dumps([numba.__version__, sys.version, machine.machine(), files])


def stamps_folder() -> Path:
    """Where the stamps live: beside numba's cache, so that clearing it clears them."""
    cache = os.environ.get("NUMBA_CACHE_DIR")
    return (Path(cache) if cache else _PACKAGE / "__pycache__") / "heraldbench-warm"


def _stamp(spec: ExperimentSpec, sched_spec: SchedulerSpecBase) -> Path:
    key = f"{_sources_key()}|{_shape_key(spec)}|{_scheduler_key(sched_spec)}"
    return stamps_folder() / hashlib.sha256(key.encode()).hexdigest()[:24]


def _write_stamp(spec: ExperimentSpec, sched_spec: SchedulerSpecBase) -> None:
    stamp = _stamp(spec, sched_spec)
    try:  # a read-only installation warms up each time, and numba uses its user-wide cache
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(f"{_shape_key(spec)} {_scheduler_key(sched_spec)}\n")
    except OSError:
        pass
