"""``row-wise`` and ``table-row-wise``: a table's rows cut into contiguous equal blocks.

``row-wise`` (TorchRec ``ShardingType.ROW_WISE``): ``ceil(rows / W)`` rows on each of the W
devices in order. ``table-row-wise`` (``TABLE_ROW_WISE``): the same over the D devices of one
host, the host chosen per table greedily by expected lookups (largest first, least-loaded
host; our cost, as table-wise's).
"""

from __future__ import annotations

import numpy as np

from heraldbench.platform.placements._base import PlacementAlgorithm, block_owners, register
from heraldbench.platform.placements._table_wise import lookup_costs
from heraldbench.platform.placements.types import (
    SCOPE_DTYPE,
    AccessStats,
    ColumnShard,
    Scope,
    TableInfo,
    TablePlacement,
    Topology,
)

__all__ = ["RowWise", "TableRowWise", "row_wise_peak"]


def row_wise_peak(tables: tuple[TableInfo, ...], topology: Topology) -> int:
    """Row-wise's largest per-device memory: device 0 holds a full block of every table."""
    return sum(-(-t.rows // topology.devices) * t.row_bytes(t.dim) for t in tables)


def blocked(table: TableInfo, devices: np.ndarray) -> TablePlacement:
    owner = block_owners(table.rows, devices)
    scope = np.full(table.rows, int(Scope.DEVICE), SCOPE_DTYPE)
    return TablePlacement(table, (ColumnShard(0, table.dim, scope, owner),))


@register
class RowWise(PlacementAlgorithm):
    """Rows in contiguous blocks over every device."""

    kind = "row-wise"

    def _place(self, tables: tuple[TableInfo, ...], topology: Topology,
               stats: AccessStats | None) -> tuple[TablePlacement, ...]:
        everyone = np.arange(topology.devices)
        return tuple(blocked(table, everyone) for table in tables)


@register
class TableRowWise(PlacementAlgorithm):
    """Rows in contiguous blocks over the devices of one host per table."""

    kind = "table-row-wise"

    def _place(self, tables: tuple[TableInfo, ...], topology: Topology,
               stats: AccessStats | None) -> tuple[TablePlacement, ...]:
        costs = lookup_costs(tables, stats)
        load = np.zeros(topology.hosts)
        hosts = [0] * len(tables)
        for t in sorted(range(len(tables)), key=lambda i: (-costs[i], i)):
            hosts[t] = int(np.argmin(load))
            load[hosts[t]] += costs[t]
        per_host = topology.devices_per_host
        return tuple(blocked(table, np.arange(per_host) + host * per_host)
                     for table, host in zip(tables, hosts, strict=True))
