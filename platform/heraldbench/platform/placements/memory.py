"""Memory per device and per host of a placement: rows × (width + optimizer state) × bytes.

A ``DEVICE`` row costs its owner; a ``PER_HOST`` row costs the device of its local index on
every host; an ``EVERY_DEVICE`` row costs every device; a ``HOST_MEMORY`` row costs its
owner's host, not a device.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import numpy as np

from heraldbench.platform.exceptions import CapacityError
from heraldbench.platform.placements._base import PlacementAlgorithm, registered
from heraldbench.platform.placements.types import (
    AccessStats,
    Placement,
    Scope,
    TableInfo,
    Topology,
)

__all__ = ["MemoryUse", "check_fits", "least_device_bytes", "memory_use", "place_fitting"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MemoryUse:
    """Bytes held per device (``device``, shape (H·D,)) and per host (``host``, shape (H,))."""

    device: np.ndarray
    host: np.ndarray


def memory_use(placement: Placement) -> MemoryUse:
    topo = placement.topology
    device = np.zeros(topo.devices, np.float64)
    host = np.zeros(topo.hosts, np.float64)
    for part in placement.tables:
        for shard in part.shards:
            row_bytes = part.table.row_bytes(shard.width)
            codes = shard.scope.astype(np.int64) * topo.devices + shard.owner
            by_code = np.bincount(codes, minlength=len(Scope) * topo.devices)
            rows_by = {s: by_code[int(s) * topo.devices:(int(s) + 1) * topo.devices] for s in Scope}
            device += rows_by[Scope.DEVICE] * row_bytes
            host += rows_by[Scope.HOST_MEMORY].reshape(topo.hosts, -1).sum(1) * row_bytes
            per_local = rows_by[Scope.PER_HOST][: topo.devices_per_host]
            device += np.tile(per_local, topo.hosts) * row_bytes
            device += int((shard.scope == Scope.EVERY_DEVICE).sum()) * row_bytes
    return MemoryUse(device.astype(np.int64), host.astype(np.int64))


def least_device_bytes(kind: str, table_bytes: int, topology: Topology) -> int:
    """The fewest bytes the busiest device holds under any plan of ``kind`` for tables of
    ``table_bytes`` in all (rows with their optimizer state): all of them where every device
    holds every row, else an even share of what host memory cannot take."""
    algorithm = registered()[kind]
    if algorithm.every_row_everywhere:
        return table_bytes
    spare = topology.hosts * topology.host_memory_bytes if algorithm.uses_host_memory else 0
    return -(-max(table_bytes - spare, 0) // topology.devices)


def check_fits(placement: Placement) -> MemoryUse:
    """The placement's memory use, or a :class:`CapacityError` naming the first device or host
    over its budget."""
    use = memory_use(placement)
    topo = placement.topology
    worst = int(np.argmax(use.device))
    if use.device[worst] > topo.device_memory_bytes:
        raise CapacityError(
            f"placement {placement.name!r} puts {int(use.device[worst]):,} bytes on device "
            f"{worst}; device_memory_bytes is {topo.device_memory_bytes:,}")
    worst = int(np.argmax(use.host))
    if use.host[worst] > topo.host_memory_bytes:
        raise CapacityError(
            f"placement {placement.name!r} puts {int(use.host[worst]):,} bytes in host "
            f"{worst}'s memory; host_memory_bytes is {topo.host_memory_bytes:,}")
    return use


def place_fitting(algorithm: PlacementAlgorithm, tables: tuple[TableInfo, ...],
                  topology: Topology, stats: AccessStats) -> tuple[Placement, MemoryUse]:
    """The plan from the trace's statistics, where it fits. A placement that can do without
    statistics reads them only to balance lookups; where that balance misses memory, its plan
    of the tables alone is taken instead, the one a submission was checked by, so a run never
    fails on memory where its submission passed (``check_fits_any_trace``)."""
    try:
        placement = algorithm.place(tables, topology, stats)
        return placement, check_fits(placement)
    except CapacityError as balanced:
        if algorithm.needs_stats:
            raise
        try:
            placement = algorithm.place(tables, topology)
            use = check_fits(placement)
        except CapacityError:
            raise balanced from None
        why = (f"the plan balanced by the trace's lookups does not fit ({balanced}); placed by "
               "the tables alone")
        log.warning("%s: %s", algorithm.kind, why)
        return replace(placement, fallback=why), use
