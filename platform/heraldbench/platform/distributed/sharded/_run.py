"""A placement's training, run two ways: W ranks as threads of this process (``emulated``), or
one ``torch.distributed`` process per rank started by the distributed trainer's own launcher
(``gloo``); the same rank program (:mod:`._rank`) either way, and one assembly of the outcome."""

from __future__ import annotations

import datetime
import pickle
import threading
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
import torch.distributed as dist

from heraldbench.platform.data import SampleChunk, TraceSource
from heraldbench.platform.distributed.sharded._comm import (
    PHASES,
    GlooComm,
    ThreadComm,
    ThreadHub,
)
from heraldbench.platform.distributed.sharded._rank import train_rank
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.placements import Placement
from heraldbench.platform.spec import TrainSpec
from heraldbench.platform.train.baseline import PlainOutcome
from heraldbench.platform.train.loop import evaluate
from heraldbench.platform.train.model import DLRM, trace_model_config

__all__ = ["PlacementJob", "PlacementOutcome", "rank_entry", "train_placement"]

#: ``RankJob.entry`` of a placement's rank (``module:function``).
ENTRY = f"{__name__}:rank_entry"


@dataclass(frozen=True)
class PlacementJob:
    """What every rank trains: the trace, the placement, samples per device per iteration."""

    trace: TraceSource
    placement: Placement
    batch_size: int
    embedding_dim: int
    settings: TrainSpec
    dtype: str = "float32"


@dataclass
class PlacementOutcome(PlainOutcome):
    """A placement's trained model, its rows gathered from their holders (``table``), its
    quality and throughput (as the plain run's), and what it moved.

    ``measured``: per phase (``forward``, ``backward``, ``sync``) the bytes each rank sent,
    (devices, 2 tiers), as the accounting's ``Traffic`` counts them; ``ids_sent`` (devices, 2),
    from the routes; ``dense_allreduce_bytes``: the payload each rank handed the dense
    all-reduce. ``replicas_identical``: every holder's copy of every row was equal.
    """

    placement: str
    measured: dict[str, np.ndarray]
    replicas_identical: bool


def train_placement(trace: TraceSource, held_out: SampleChunk, placement: Placement,
                    settings: TrainSpec, *, batch_size: int, embedding_dim: int,
                    dtype: torch.dtype = torch.float32,
                    backend: Literal["emulated", "gloo"] = "emulated",
                    timeout_s: float = 300.0) -> PlacementOutcome:
    """Train the DLRM on ``trace`` with its rows where ``placement`` puts them, one rank per
    device, ``batch_size`` samples per device per iteration; score on ``held_out``."""
    if settings.device == "cuda":
        raise SpecError("a placement's training runs on the CPU (gloo); set train.device: cpu")
    dtype_name = str(dtype).removeprefix("torch.")
    job = PlacementJob(trace, placement, batch_size, embedding_dim, settings, dtype_name)
    world = placement.topology.devices
    if backend == "emulated":
        reports = _emulate(job, world)
    elif backend == "gloo":
        from heraldbench.platform.distributed.launch import launch_local

        return launch_local({"job": pickle.dumps((job, held_out, timeout_s))}, [], world,
                            timeout_s, threads=1, entry=ENTRY)
    else:
        raise SpecError(f"placement training backend must be emulated or gloo, got {backend!r}")
    return assemble(job, held_out, reports)


def _emulate(job: PlacementJob, world: int) -> list[dict[str, Any]]:
    """Every rank in a thread of its own; the first failure fails the run."""
    hub, reports, errors = ThreadHub(world), [None] * world, []

    def run(rank: int) -> None:
        try:
            reports[rank] = train_rank(job, ThreadComm(hub, rank))
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller
            errors.append(error)
            hub.abort()

    threads = [threading.Thread(target=run, args=(r,), daemon=True) for r in range(world)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise next((e for e in errors if not isinstance(e, threading.BrokenBarrierError)),
                   errors[0])
    return reports  # type: ignore[return-value]


def rank_entry(rank_job, rank: int, progress=None) -> PlacementOutcome | None:
    """One process's rank under the distributed launcher (``RankJob.entry``)."""
    from heraldbench.platform.distributed._driver import join_group

    job, held_out, timeout_s = pickle.loads(rank_job.spec["job"])
    join_group(rank_job, rank, "gloo", datetime.timedelta(seconds=timeout_s))
    try:
        torch.set_num_threads(rank_job.threads or 1)
        report = train_rank(job, GlooComm(), progress)
        reports: list[Any] = [None] * rank_job.world
        dist.gather_object(report, reports if rank == 0 else None, dst=0)
    finally:
        dist.destroy_process_group()
    return assemble(job, held_out, reports) if rank == 0 else None


def assemble(job: PlacementJob, held_out: SampleChunk, reports: list[dict[str, Any]]
             ) -> PlacementOutcome:
    """Rank 0's view: the rows gathered from every holder, the model scored, bytes summed."""
    reports = sorted(reports, key=lambda r: r["rank"])
    table, identical = _gather_table(job, reports)
    config = trace_model_config(job.settings.model, embedding_dim=job.embedding_dim,
                                trace=job.trace)
    model = DLRM(config, seed=job.settings.torch_seed).to(dtype=table.dtype)
    model.load_state_dict(reports[0]["model"])
    losses = np.asarray(reports[0]["losses"])
    iterations = len(losses)
    seconds = max(r["seconds"] for r in reports)
    samples = iterations * job.batch_size * len(reports)
    measured = {phase: np.stack([r["sent"][phase] for r in reports]) for phase in PHASES}
    measured["ids_sent"] = np.stack([r["ids_sent"] for r in reports])
    measured["dense_allreduce_bytes"] = np.asarray([r["dense_bytes"] for r in reports])
    return PlacementOutcome(
        model=model, table=table,
        final=evaluate(model, table, held_out, iterations, torch.device("cpu")),
        losses=losses, iterations=iterations, samples_trained=samples, timing={"train": seconds},
        samples_per_second=samples / seconds if seconds > 0 else 0.0,
        placement=job.placement.name, measured=measured, replicas_identical=identical)


def _gather_table(job: PlacementJob, reports) -> tuple[torch.Tensor, bool]:
    """The (rows, D) table from every rank's rows; whether each replica equals the first."""
    layout = job.trace.layout
    offsets = np.asarray(layout.offsets, np.int64)
    dtype = getattr(torch, job.dtype)
    table = torch.full((int(sum(layout.sizes)), job.embedding_dim), float("nan"), dtype=dtype)
    seen = torch.zeros(table.shape, dtype=torch.bool)
    identical = True
    slots = [(t, part) for t, tp in enumerate(job.placement.tables) for part in tp.shards]
    for report in reports:
        for (t, part), (rows, values) in zip(slots, report["held"], strict=True):
            at = torch.from_numpy(offsets[t] + rows)
            cols = slice(part.column, part.column + part.width)
            before, known = table[at, cols], seen[at, cols]
            identical &= bool(torch.equal(before[known], values[known]))
            table[at, cols] = values
            seen[at, cols] = True
    return table, identical
