"""Placements run over a trace: statistics, placement, memory check, accounting, time."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from heraldbench.platform.data import TraceSource
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.placements._base import create
from heraldbench.platform.placements.accounting import Traffic, account
from heraldbench.platform.placements.jagged import JaggedIds
from heraldbench.platform.placements.memory import MemoryUse, place_fitting
from heraldbench.platform.placements.stats import jagged_batches, stats_of_batches
from heraldbench.platform.placements.timing import TierLinks, comm_seconds_per_iteration
from heraldbench.platform.placements.types import AccessStats, Placement, TableInfo, Topology

__all__ = ["PlacementRun", "check_workers", "iteration_batches", "place_checked", "run_placements",
           "tables_of"]

#: Samples per accounting chunk, about (rounded down to whole iterations).
_CHUNK_SAMPLES = 1 << 20


@dataclass(frozen=True)
class PlacementRun:
    kind: str
    traffic: Traffic
    device_memory_max: int
    host_memory_max: int
    comm_seconds: float
    place_seconds: float
    account_seconds: float
    fallback: str | None = None  # Placement.fallback

    def summary(self) -> dict[str, Any]:
        tiers = self.traffic.bytes_per_tier()
        it = max(self.traffic.iterations, 1)
        return {
            "placement": self.kind,
            "iterations": self.traffic.iterations,
            "intra_host_bytes_per_iteration": float(tiers[0]),
            "inter_host_bytes_per_iteration": float(tiers[1]),
            "inter_host_alltoall_bytes_per_iteration":
                float(self.traffic.alltoall_bytes_per_tier()[1]),
            "sync_bytes_per_iteration": float(self.traffic.sync.sum() / it),
            "device_memory_max_bytes": self.device_memory_max,
            "host_memory_max_bytes": self.host_memory_max,
            "load_balance": self.traffic.load_balance,
            "host_memory_reads_per_iteration": float(self.traffic.host_memory_reads.sum() / it),
            "comm_ms_per_iteration": self.comm_seconds * 1e3,
            "place_seconds": self.place_seconds,
            "account_seconds": self.account_seconds,
            "fallback": self.fallback,
        }


def tables_of(source: TraceSource, dim: int, bytes_per_value: int = 4) -> tuple[TableInfo, ...]:
    """The trace's tables as placements see them: a sequence table's lookups are not pooled.
    ``bytes_per_value``: 4 (float32) as a deployment trains; 8 where a float64 training's
    moved bytes are compared to the counted ones."""
    layout = source.layout
    return tuple(TableInfo(name, rows, dim, pooled=pooling != "sequence",
                           bytes_per_value=bytes_per_value)
                 for name, rows, pooling in zip(layout.names, layout.sizes,
                                                layout.table_poolings, strict=True))


def check_workers(topology: Topology, workers: int) -> None:
    if topology.devices != workers:
        raise SpecError(f"hosts × devices_per_host = {topology.hosts} × "
                        f"{topology.devices_per_host} = {topology.devices} devices, but "
                        f"cluster.workers is {workers}")


def iteration_batches(source: TraceSource, iteration_samples: int, iterations: int | None
                      ) -> Iterator[JaggedIds]:
    """The trace's first ``iterations`` whole iterations (all), in chunks of whole iterations."""
    chunk = max(1, _CHUNK_SAMPLES // iteration_samples) * iteration_samples
    samples = source.num_samples if iterations is None else iterations * iteration_samples
    blocks = -(-min(samples, source.num_samples) // chunk)
    return itertools.islice(jagged_batches(source, chunk), blocks)


def place_checked(kind: str, knobs: dict[str, Any], tables: tuple[TableInfo, ...],
                  topology: Topology, stats: AccessStats) -> tuple[Placement, MemoryUse]:
    """``kind``'s placement of ``tables``, refused (CapacityError) where it does not fit."""
    return place_fitting(create(kind, **knobs), tables, topology, stats)


def run_placements(source: TraceSource, tables: tuple[TableInfo, ...], topology: Topology,
                   kinds: list[str], batch_size: int, links: TierLinks,
                   knobs: dict[str, dict[str, Any]] | None = None,
                   iterations: int | None = None) -> list[PlacementRun]:
    """Each placement of ``kinds`` over the trace's first ``iterations`` iterations (all)."""
    iteration_samples = batch_size * topology.devices
    stats = stats_of_batches(iteration_batches(source, iteration_samples, iterations),
                             tuple(t.rows for t in tables))
    out = []
    for kind in kinds:
        started = time.perf_counter()
        placement, use = place_checked(kind, (knobs or {}).get(kind, {}), tables, topology, stats)
        placed = time.perf_counter()
        traffic = account(placement, iteration_batches(source, iteration_samples, iterations),
                          batch_size)
        out.append(PlacementRun(kind, traffic, int(use.device.max()), int(use.host.max()),
                                comm_seconds_per_iteration(traffic, links),
                                placed - started, time.perf_counter() - placed,
                                placement.fallback))
    return out
