"""``data-parallel``: every table whole on every device (TorchRec ``ShardingType.DATA_PARALLEL``);
lookups are local and the rows' gradients are all-reduced."""

from __future__ import annotations

from heraldbench.platform.placements._base import PlacementAlgorithm, register, uniform_shard
from heraldbench.platform.placements.types import (
    AccessStats,
    Scope,
    TableInfo,
    TablePlacement,
    Topology,
)

__all__ = ["DataParallel"]


@register
class DataParallel(PlacementAlgorithm):
    """Every row on every device."""

    kind = "data-parallel"
    every_row_everywhere = True

    def _place(self, tables: tuple[TableInfo, ...], topology: Topology,
               stats: AccessStats | None) -> tuple[TablePlacement, ...]:
        return tuple(
            TablePlacement(table, (uniform_shard(table.rows, 0, table.dim, Scope.EVERY_DEVICE, 0),))
            for table in tables
        )
