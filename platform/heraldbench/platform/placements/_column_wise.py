"""``column-wise``: a table's columns cut into shards of ``shard_dim`` columns (the last one
narrower), each shard placed whole on one device as a table-wise shard is (TorchRec
``ShardingType.COLUMN_WISE``). Each shard keeps its own optimizer state.

TorchRec's planner picks the shard width from its constraints (``min_partition``); here it
is a knob, 32 by default (our choice).
"""

from __future__ import annotations

from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.placements._base import PlacementAlgorithm, register, uniform_shard
from heraldbench.platform.placements._table_wise import expected_lookups, greedy_devices
from heraldbench.platform.placements.types import (
    AccessStats,
    Scope,
    TableInfo,
    TablePlacement,
    Topology,
)

__all__ = ["ColumnWise"]


@register
class ColumnWise(PlacementAlgorithm):
    """Columns cut into shards of ``shard_dim``, each shard whole on one device."""

    kind = "column-wise"

    def __init__(self, shard_dim: int = 32) -> None:
        if isinstance(shard_dim, bool) or not isinstance(shard_dim, int) or shard_dim < 1:
            raise SpecError(f"column-wise shard_dim must be a positive integer, got {shard_dim!r}")
        self.shard_dim = shard_dim

    def _cuts(self, table: TableInfo) -> list[tuple[int, int]]:
        return [(c, min(self.shard_dim, table.dim - c)) for c in range(0, table.dim, self.shard_dim)]

    def _place(self, tables: tuple[TableInfo, ...], topology: Topology,
               stats: AccessStats | None) -> tuple[TablePlacement, ...]:
        items = [(t, column, width) for t, table in enumerate(tables)
                 for column, width in self._cuts(table)]
        costs = [expected_lookups(stats, t) * width for t, _, width in items]
        sizes = [tables[t].rows * tables[t].row_bytes(width) for t, _, width in items]
        labels = [f"table {tables[t].name!r} columns {c}..{c + w - 1}" for t, c, w in items]
        devices = greedy_devices(costs, sizes, topology, labels)
        shards: list[list] = [[] for _ in tables]
        for (t, column, width), device in zip(items, devices, strict=True):
            shards[t].append(uniform_shard(tables[t].rows, column, width, Scope.DEVICE, device))
        return tuple(TablePlacement(table, tuple(parts))
                     for table, parts in zip(tables, shards, strict=True))
