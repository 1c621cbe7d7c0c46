"""Placements: the sharded (model-parallel) paradigm. Each row of each table is held by one or
more devices of a two-tier cluster; the accounting counts what that costs over a trace.

>>> from heraldbench.platform.placements import Topology, TableInfo, create
>>> plan = create("row-wise").place((TableInfo("t", rows=10, dim=4),), Topology(2, 2))
>>> plan.holders(0, 9)
(3,)
"""

from heraldbench.platform.placements._base import (
    PlacementAlgorithm,
    create,
    register,
    registered,
    uniform_shard,
)
from heraldbench.platform.placements._column_wise import ColumnWise
from heraldbench.platform.placements._data_parallel import DataParallel
from heraldbench.platform.placements._flexshard import FlexShard
from heraldbench.platform.placements._recshard import RecShard
from heraldbench.platform.placements._row_wise import RowWise, TableRowWise, row_wise_peak
from heraldbench.platform.placements._table_wise import TableWise, greedy_spilling, lookup_costs
from heraldbench.platform.placements.accounting import Traffic, account, serving_devices
from heraldbench.platform.placements.jagged import JaggedIds
from heraldbench.platform.placements.memory import MemoryUse, check_fits, memory_use
from heraldbench.platform.placements.runs import tables_of
from heraldbench.platform.placements.stats import access_stats
from heraldbench.platform.placements.types import (
    AccessStats,
    ColumnShard,
    Placement,
    Scope,
    TableInfo,
    TablePlacement,
    Topology,
)

__all__ = [
    "AccessStats",
    "ColumnShard",
    "ColumnWise",
    "DataParallel",
    "FlexShard",
    "JaggedIds",
    "MemoryUse",
    "Placement",
    "PlacementAlgorithm",
    "RecShard",
    "RowWise",
    "Scope",
    "TableInfo",
    "TablePlacement",
    "TableRowWise",
    "TableWise",
    "Topology",
    "Traffic",
    "access_stats",
    "account",
    "check_fits",
    "create",
    "greedy_spilling",
    "lookup_costs",
    "memory_use",
    "register",
    "registered",
    "row_wise_peak",
    "serving_devices",
    "tables_of",
    "uniform_shard",
]
