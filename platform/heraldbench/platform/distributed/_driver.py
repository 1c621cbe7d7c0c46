"""What every rank runs: join the process group, then train each scheduler of the job in turn.

Every rank opens the trace, replays each scheduler's decision stream and carries out its share
(:mod:`._rank`); rank 0 also scores the model and assembles the outcome, with the measured time
and bytes of every rank.
"""

from __future__ import annotations

import datetime
import importlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from heraldbench.platform.counters import TALLY
from heraldbench.platform.data import read_ahead
from heraldbench.platform.distributed._clock import PHASES
from heraldbench.platform.distributed._rank import RankRun, RankSetup
from heraldbench.platform.train.loop import TrainOutcome, outcome_counts

__all__ = ["RankJob", "join_group", "run_rank"]

Progress = Callable[[int, int], None]

#: ``schedule: auto`` replays the stream ahead when it is estimated to fit in this many bytes.
AHEAD_BUDGET_BYTES = 1 << 30
#: Compute the decision stream in a read-ahead thread: None = when the ranks on this host leave a
#: core spare (:func:`reads_ahead`); True / False force it (benchmarks).
READ_AHEAD: bool | None = None


def reads_ahead(world: int, device: torch.device) -> bool:
    """Whether a rank computes its decision stream in a second thread, ahead of its training.

    Only where that thread gets a core of its own: on CUDA, or where this host's CPU cores
    outnumber its ranks (``LOCAL_WORLD_SIZE`` where set, else all ``world`` ranks). Where ranks
    already share the cores (2 cores, 2–4 ranks) the thread overlaps nothing: it competes with
    the ranks' torch threads and adds a hand-over per iteration (measured with
    benchmarks/bench_distributed.py), so the stream is computed inline, in the same order.
    """
    if READ_AHEAD is not None:
        return READ_AHEAD
    from heraldbench.platform._cores import usable_cores

    local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    return device.type == "cuda" or usable_cores() > local


@dataclass
class RankJob:
    """One distributed training, as every rank receives it (plain values: it crosses processes).

    Attributes:
        spec: the experiment spec (JSON).
        schedulers: indices into the spec's schedulers with the naive baseline added
            (:func:`heraldbench.platform.spec.scheduler_specs`) to train, in order.
        world: ranks in all (W workers, then dedicated PS ranks).
        master: ``host:port`` of rank 0's rendezvous.
        threads: torch threads per rank (None: the cores of the host shared by its ranks).
        entry: ``module:function`` each rank runs instead, as ``function(job, rank, progress)``
            (a placement's training: :mod:`.sharded`); "" for the schedulers' training.
    """

    spec: dict[str, Any]
    schedulers: list[int]
    world: int
    master: str
    threads: int | None = None
    entry: str = ""


def device_of(settings, rank: int) -> torch.device:
    from heraldbench.platform.train.runtime import resolve_device

    device = resolve_device(settings.device)
    if device.type == "cuda":
        local = int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()
        return torch.device("cuda", local)
    return device


def run_rank(job: RankJob, rank: int, progress: Progress | None = None) -> list[TrainOutcome] | None:
    """Train the job's schedulers as ``rank``; rank 0 returns their outcomes, others None."""
    if job.entry:
        module, name = job.entry.split(":")
        return getattr(importlib.import_module(module), name)(job, rank, progress)
    from heraldbench.platform.spec import parse_spec
    from heraldbench.platform.train.runtime import configure_threads

    spec = parse_spec(job.spec)
    settings = spec.train
    device = device_of(settings, rank)
    backend = "nccl" if device.type == "cuda" else "gloo"
    if device.type == "cuda":
        torch.cuda.set_device(device)
    join_group(job, rank, backend, datetime.timedelta(seconds=settings.distributed.timeout_s))
    try:
        configure_threads(threads=job.threads, reserve=1)
        setup = RankSetup(rank, job.world, spec.cluster.workers, device)
        return _train_all(spec, job, setup, progress)
    finally:
        dist.destroy_process_group()


def join_group(job: RankJob, rank: int, backend: str, timeout: datetime.timedelta) -> None:
    """Join the job's process group as ``rank`` at its rendezvous."""
    dist.init_process_group(backend, init_method=f"tcp://{job.master}", rank=rank,
                            world_size=job.world, timeout=timeout)  # fmt: skip


def _train_all(spec, job: RankJob, setup: RankSetup, progress: Progress | None):
    from heraldbench.platform.schedulers import from_spec
    from heraldbench.platform.spec import scheduler_specs
    from heraldbench.platform.train.split import training_split

    # Only rank 0 scores the model: the others skip reading the held-out tail.
    train_trace, held_out = training_split(spec, spec.dataset.open(),
                                           read_held_out=setup.rank == 0)  # fmt: skip
    cache_rows = spec.cache.resolve_rows(train_trace.layout.total_rows, spec.embedding_dim)
    listed = scheduler_specs(spec)
    outcomes = []
    for index in job.schedulers:
        sched_spec, _ = listed[index]
        scheduler = from_spec(sched_spec, workers=spec.cluster.workers,
                              batch_size=spec.cluster.batch_size, seed=spec.seed)  # fmt: skip
        outcomes.append(_train_one(spec, setup, train_trace, held_out, scheduler, cache_rows,
                                   progress))  # fmt: skip
    return outcomes if setup.rank == 0 else None


def _train_one(spec, setup, trace, held_out, scheduler, cache_rows, progress) -> TrainOutcome | None:
    from heraldbench.platform.sim import decisions

    settings = spec.train
    dtype = torch.float64 if settings.dtype == "float64" else torch.float32
    plan = scheduler.plan_run(trace)
    run = RankRun(setup, trace, held_out, scheduler, plan.oracle is not None, cache_rows,
                  spec.embedding_dim, settings, dtype)  # fmt: skip
    stream = decisions(trace, scheduler, cache_rows=cache_rows, policy=spec.cache.policy,
                       consistency=spec.consistency, plan=plan)  # fmt: skip
    first = next(stream, None)  # the stream's kernels compile here, before the clock starts
    mode = schedule_mode(spec.train.distributed.schedule, first,
                         trace.num_samples // scheduler.global_batch)  # fmt: skip
    if mode == "ahead":
        stream = _replayed_ahead(stream)
    elif reads_ahead(setup.world, setup.device):
        stream = read_ahead(stream, 2)
    if setup.world > 1:
        dist.barrier()  # ranks start the clock together: no rank's start-up counts as a pull
    start, evaluating, done = time.perf_counter(), 0.0, 0
    cpu_start = time.process_time()
    try:
        while True:
            waited = time.perf_counter()
            dec, first = (first, None) if first is not None else (next(stream, None), None)
            if dec is None:
                break
            run.clock.start_iteration()
            run.clock.record("schedule", time.perf_counter() - waited)
            run.step(dec)
            done += len(dec.batch)
            iterations = len(run.tallies)
            if settings.eval_interval and iterations % settings.eval_interval == 0:
                began = time.perf_counter()
                run.evaluate(pending=True)
                evaluating += time.perf_counter() - began
            if progress is not None and iterations % 16 == 0:
                progress(done, trace.num_samples)
    finally:
        stream.close()
    flushed = run.flush()
    trained = time.perf_counter() - start - evaluating
    run.cpu_s = time.process_time() - cpu_start  # every thread of the rank (interval evals too)
    run.evaluate(pending=False)
    run.schedule_mode = mode
    phases = run.phase_table()
    report = _rank_report(run, setup, phases)
    reports: list[Any] = [None] * setup.world
    dist.gather_object(report, reports if setup.rank == 0 else None, dst=0)
    if setup.rank != 0:
        return None
    return _outcome(run, scheduler, trace, flushed, done, trained, evaluating, reports)


def schedule_mode(asked: str, first, iterations: int) -> str:
    """``ahead`` or ``inline``; ``auto`` is ahead when the stream, estimated from its first
    iteration's arrays × ``iterations``, fits in :data:`AHEAD_BUDGET_BYTES`."""
    if asked != "auto":
        return asked
    if first is None:
        return "inline"
    return "ahead" if decision_bytes(first) * iterations <= AHEAD_BUDGET_BYTES else "inline"


def decision_bytes(dec) -> int:
    """Bytes of one iteration's decisions (its arrays and its batch's)."""
    arrays = [*vars(dec).values(), *vars(dec.batch).values()]
    phase = dec.phase.rows if dec.phase is not None else None
    return sum(a.nbytes for a in (*arrays, phase) if isinstance(a, np.ndarray))


def _replayed_ahead(stream):
    """The rest of the stream, computed now (before the clock starts), handed out in order.

    Modelling assumption: a deployment runs its scheduler ahead, on other cores or hosts; replayed
    inline, each rank's replay would take CPU from training wherever ranks outnumber cores (4
    ranks on 2 cores: every scheduler's measured iteration rose by about twice its replay)."""
    try:
        ahead = list(stream)
    finally:
        stream.close()
    ahead.reverse()

    def handed_out():
        while ahead:
            yield ahead.pop()

    return handed_out()


def _rank_report(run: RankRun, setup: RankSetup, phases: np.ndarray) -> dict[str, Any]:
    exchange = run.exchange
    return {
        "rank": setup.rank,
        "role": "worker" if setup.trains else "ps",
        "phases": phases,
        "sent_bytes": exchange.sent_bytes,
        "received_bytes": exchange.received_bytes,
        "local_rows": exchange.local_rows,
        "cpu_s": run.cpu_s,
        "host": os.uname().nodename,
    }


def _outcome(run, scheduler, trace, flushed, samples, trained, evaluating, reports) -> TrainOutcome:
    from heraldbench.platform.distributed.measured import measured_summary

    tallies = run.tally_table()
    iterations = len(tallies)
    series = {name: tallies[:, i] for i, name in enumerate(TALLY)}
    series["loss"] = np.asarray(run.losses)
    measured = measured_summary(reports, run, trained, samples, iterations, flushed)
    series.update(measured.pop("series"))
    timing = {name: measured["seconds"][name] for name in PHASES}
    timing |= {"evaluation": evaluating, "train": trained}
    return TrainOutcome(
        counts=outcome_counts(series, flushed),
        series=series,
        iterations=iterations,
        samples_trained=samples,
        samples_dropped=trace.num_samples - samples,
        evaluations=run.evaluations,
        final=run.evaluations[-1],
        timing=timing,
        samples_per_second=samples / trained if trained > 0 else 0.0,
        direct_transfers=int(series["direct"].sum()),
        stale_reads=0,
        max_staleness=0,
        device=str(run.device),
        model=run.model,
        table=run.gathered_final,
        info={"threads": torch.get_num_threads(), "measured": measured,
              "held_out_samples": len(run.held_out), "trace": trace.describe()},  # fmt: skip
    )
