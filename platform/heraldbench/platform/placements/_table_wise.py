"""``table-wise``: each table whole on one device (TorchRec ``ShardingType.TABLE_WISE``).

TorchRec's planner places shards greedily (``GreedyPerfPartitioner``): shards sorted by cost,
largest first, each on the device with the lowest cost so far that has the memory. Its cost
is the modelled lookup time; ours is the expected lookups per sample × width (the pooling
factor from the trace's statistics, 1 without them): a modelling choice, as is breaking ties
by the lowest device index.
"""

from __future__ import annotations

import numpy as np

from heraldbench.platform.exceptions import CapacityError
from heraldbench.platform.placements._base import PlacementAlgorithm, register, uniform_shard
from heraldbench.platform.placements.types import (
    AccessStats,
    ColumnShard,
    Scope,
    TableInfo,
    TablePlacement,
    Topology,
)

__all__ = ["TableWise", "expected_lookups", "greedy_devices", "greedy_spilling", "lookup_costs"]


def greedy_devices(costs: list[float], sizes: list[int], topology: Topology,
                   labels: list[str]) -> list[int]:
    """A device per item: largest cost first, onto the least-loaded device it fits on."""
    devices, spilled = greedy_spilling(costs, sizes, topology)
    if spilled:
        item = spilled[0]
        raise CapacityError(f"{labels[item]} ({sizes[item]:,} bytes) fits on no device: "
                            f"device_memory_bytes is {topology.device_memory_bytes:,}")
    return devices


def greedy_spilling(costs: list[float], sizes: list[int], topology: Topology
                    ) -> tuple[list[int], list[int]]:  # fmt: skip
    """:func:`greedy_devices`, where an item that fits on no device goes to the least-loaded
    one without taking its memory (kept in its host's memory); returns the devices and the
    spilled items, in the order they were placed."""
    load = np.zeros(topology.devices)
    used = np.zeros(topology.devices)
    chosen, spilled = [0] * len(costs), []
    for item in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        fits = np.flatnonzero(used + sizes[item] <= topology.device_memory_bytes)
        if fits.size:
            device = int(fits[np.argmin(load[fits])])
            used[device] += sizes[item]
        else:
            device = int(np.argmin(load))
            spilled.append(item)
        load[device] += costs[item]
        chosen[item] = device
    return chosen, spilled


def expected_lookups(stats: AccessStats | None, table: int) -> float:
    return 1.0 if stats is None else stats.pooling_factor(table)


def lookup_costs(tables: tuple[TableInfo, ...], stats: AccessStats | None) -> list[float]:
    """Each table's expected lookups per sample × its width: what the greedy plans balance."""
    return [expected_lookups(stats, t) * table.dim for t, table in enumerate(tables)]


@register
class TableWise(PlacementAlgorithm):
    """Each table whole on one device, greedy by expected lookups × width."""

    kind = "table-wise"

    def _place(self, tables: tuple[TableInfo, ...], topology: Topology,
               stats: AccessStats | None) -> tuple[TablePlacement, ...]:
        costs = lookup_costs(tables, stats)
        sizes = [table.rows * table.row_bytes(table.dim) for table in tables]
        devices = greedy_devices(costs, sizes, topology,
                                 [f"table {t.name!r}" for t in tables])
        return tuple(
            TablePlacement(table, (whole_table(table, device),))
            for table, device in zip(tables, devices, strict=True)
        )


def whole_table(table: TableInfo, device: int) -> ColumnShard:
    return uniform_shard(table.rows, 0, table.dim, Scope.DEVICE, device)
