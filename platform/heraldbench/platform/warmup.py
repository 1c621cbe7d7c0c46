"""Compiling a spec's kernels before it runs: once per machine, with progress.

numba compiles a kernel at its first call and keeps the machine code in its on-disk cache
(beside the sources, or under ``NUMBA_CACHE_DIR``), from which later processes load it. On a
fresh checkout a run's first minutes are therefore spent compiling, in every worker process at
once and with nothing on the screen. :func:`warm_up` runs the specs in miniature first (each
dataset cut to a few iterations and read once, each scheduler simulated on it, as a real run
does), so that every kernel they need is compiled once, in steps a terminal or the service can
show; the workers then load them. With two processes, the dataset's reader (the workload
generator's kernels, the longest to compile) compiles in one while the schedulers compile in the
other on a stand-in of the dataset's samples. A stamp per (shape, scheduler) records that it was
warmed on these sources with this numba, so later runs skip the miniature.

Modelling assumption: the kernels' specialisations depend on a spec's shape (dataset kind,
workers, cache policy, consistency, lower bound) and its schedulers, never on its sizes or on the
ids a trace holds; the miniature keeps all of these and the table sizes, and changes only the
number of samples.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import platform as machine
import queue
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numba
import numpy as np

from heraldbench.platform.data import InMemoryTrace
from heraldbench.platform.data.ragged import full_lengths
from heraldbench.platform.exceptions import HeraldbenchError
from heraldbench.platform.runner import simulate_run
from heraldbench.platform.schedulers import SchedulerSpecBase
from heraldbench.platform.spec import ExperimentSpec, scheduler_specs

__all__ = [
    "MINIATURE_ITERATIONS", "READS_THE_DATASET", "WarmUpProgress", "is_warm", "stamps_folder",
    "warm_up", "warm_up_label",
]  # fmt: skip

#: Called before each step with (steps done, steps in all, what the step compiles for).
WarmUpProgress = Callable[[int, int, str], None]
#: Iterations the miniature runs: enough for every scheduler's windows and phases to start.
MINIATURE_ITERATIONS = 8
#: Schedulers whose runs read their dataset beyond its chunks (FAE samples it, or spills what
#: its reader made): warmed on the dataset itself, after its reader.
READS_THE_DATASET = frozenset({"fae"})
#: How often the parent looks whether a silent child is still alive.
_POLL_SECONDS = 1.0
_PACKAGE = Path(__file__).resolve().parent


def warm_up_label(done: int, total: int) -> str:
    """What a terminal or the service shows while :func:`warm_up` runs."""
    return f"compiling the simulator's kernels, once per machine: {done} of {total}"


def is_warm(spec: ExperimentSpec) -> bool:
    """Every scheduler of ``spec`` was warmed in a spec of its shape on these sources."""
    return all(_stamp(spec, s).exists() for s, _ in scheduler_specs(spec))


def warm_up(
    specs: Iterable[ExperimentSpec], progress: WarmUpProgress | None = None, processes: int = 1
) -> int:
    """Compile what ``specs`` need by running their miniatures; returns the steps run (0 when
    every spec is warm). Specs of one shape share a miniature; nothing of it is kept but numba's
    cache and the stamps. With ``processes`` > 1 the dataset's reader compiles in a process of
    its own while the schedulers compile on a stand-in of its samples (:func:`_stand_in`)."""
    shapes = [_jobs(mini, runs, processes) for mini, runs in _cold_miniatures(specs)]
    total = sum(len(job.runs) + job.on_dataset for jobs in shapes for job in jobs)
    report = progress or (lambda done, total, step: None)
    steps = _Steps(total, report)
    for jobs in shapes:  # one shape at a time: at most ``processes`` miniatures in memory
        if len(jobs) > 1:
            _in_processes(jobs, steps)
        else:
            _run_job(jobs[0], steps.started, steps.finished)
    if total:
        report(total, total, "")
    return total


@dataclass(frozen=True)
class _Job:
    """Steps one process runs: the dataset's reader then the runs that read the dataset
    (``on_dataset``), or runs on a stand-in of its samples."""

    mini: ExperimentSpec
    runs: tuple[tuple[SchedulerSpecBase, bool], ...]
    on_dataset: bool


def _jobs(mini: ExperimentSpec, runs: list[tuple[SchedulerSpecBase, bool]],
          processes: int) -> list[_Job]:
    if processes <= 1:
        return [_Job(mini, tuple(runs), on_dataset=True)]
    reading = tuple(r for r in runs if r[0].kind in READS_THE_DATASET)
    others = tuple(r for r in runs if r[0].kind not in READS_THE_DATASET)
    return [_Job(mini, reading, on_dataset=True)] + ([_Job(mini, others, False)] if others else [])


class _Steps:
    """Counts the steps done, reports the one running, and stamps each run warmed (here, in the
    process that asked: the stamps are its to write)."""

    def __init__(self, total: int, report: WarmUpProgress) -> None:
        self.total, self.report, self.done = total, report, 0

    def started(self, step: str) -> None:
        self.report(self.done, self.total, step)

    def finished(self, warmed: tuple[ExperimentSpec, SchedulerSpecBase] | None) -> None:
        self.done += 1
        if warmed is not None:
            _write_stamp(*warmed)


def _run_job(job: _Job, started: Callable[[str], None], finished: Callable[[Any], None]) -> None:
    mini = job.mini
    if job.on_dataset:
        started(f"reading {mini.dataset.kind}")
        trace = mini.dataset.open()
        for _ in trace.chunks(mini.cluster.workers * mini.cluster.batch_size):
            pass
        finished(None)
    else:
        trace = _stand_in(mini)
    for sched_spec, added in job.runs:
        started(sched_spec.kind)
        simulate_run(mini, sched_spec, trace=trace, baseline_added=added)
        finished((mini, sched_spec))


def _stand_in(mini: ExperimentSpec) -> InMemoryTrace:
    """The miniature's samples with ids drawn at random from its tables: arrays of the types
    the dataset's own chunks have, made without its reader. Modelling assumption: a kernel's
    specialisation depends on its arrays' types, never on the ids they hold."""
    layout = mini.dataset.open().layout
    samples = mini.cluster.workers * mini.cluster.batch_size * MINIATURE_ITERATIONS
    tables = layout.column_tables
    draws = np.random.default_rng(0).random((samples, layout.ids_per_sample))
    local = (draws * np.asarray(layout.sizes)[tables]).astype(np.int64)
    lengths = None
    if layout.is_ragged:  # every sample reads every width: the ragged path's types, no pads
        lengths = full_lengths(layout.table_widths, samples)
    return InMemoryTrace(local + layout.offsets[tables], np.zeros(samples, np.float32),
                         np.zeros((samples, 0), np.float32), layout, lengths=lengths)


def _in_processes(jobs: list[_Job], steps: _Steps) -> None:
    """Each job in a process of its own (spawned: no state of this one is shared); their
    steps reported here as they start and end."""
    context = multiprocessing.get_context("spawn")
    messages = context.Queue()
    children = [context.Process(target=_child, args=(job, messages), daemon=True)
                for job in jobs]  # fmt: skip
    for child in children:
        child.start()
    running = len(children)
    while running:
        try:
            kind, value = messages.get(timeout=_POLL_SECONDS)
        except queue.Empty:
            _check_alive(children, ended=len(children) - running)
            continue
        if kind == "started":
            steps.started(value)
        elif kind == "finished":
            steps.finished(value)
        elif kind == "failed":
            for child in children:
                child.terminate()
            raise value
        else:  # "ended"
            running -= 1
    for child in children:
        child.join()


def _check_alive(children: list[Any], ended: int) -> None:
    """Raise if a child exited without saying so (killed, or the interpreter crashed): its
    steps would never come."""
    gone = [child for child in children if child.exitcode is not None]
    if len(gone) > ended:
        for child in children:
            child.terminate()
        codes = ", ".join(str(c.exitcode) for c in gone if c.exitcode) or "0"
        raise HeraldbenchError(
            f"a process compiling the simulator's kernels died (exit code {codes}) before its "
            "steps were done"
        )


def _child(job: _Job, messages: Any) -> None:
    try:
        _run_job(job, lambda step: messages.put(("started", step)),
                 lambda warmed: messages.put(("finished", warmed)))  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        try:
            messages.put(("failed", exc))
        except Exception:  # noqa: BLE001 - an exception that does not pickle
            messages.put(("failed", RuntimeError(f"{type(exc).__name__}: {exc}")))
        return
    messages.put(("ended", None))


def _cold_miniatures(
    specs: Iterable[ExperimentSpec],
) -> list[tuple[ExperimentSpec, list[tuple[SchedulerSpecBase, bool]]]]:
    """One miniature per shape, with the schedulers not warmed yet, each once."""
    plans: dict[str, tuple[ExperimentSpec, dict[str, tuple[SchedulerSpecBase, bool]]]] = {}
    for spec in specs:
        key = _shape_key(spec)
        if key not in plans:
            plans[key] = (_miniature(spec), {})
        runs = plans[key][1]
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
    features = getattr(spec.dataset, "features", None)
    many = [features is not None and features.multi_hot is not None,
            features is not None and features.sequence is not None,
            getattr(spec.dataset, "items", None) is not None]  # tables of many ids compile apart
    return json.dumps([
        spec.dataset.kind, spec.cluster.workers, spec.cache.policy, spec.consistency,
        spec.lower_bound, *([many] if any(many) else []),
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
