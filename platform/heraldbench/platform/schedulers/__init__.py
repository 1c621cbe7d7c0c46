"""Schedulers: one module per system, one registry of kinds.

>>> from heraldbench.platform.schedulers import create
>>> create("herald", workers=8, batch_size=256, lookahead=1).sync_policy.window
1
"""

from heraldbench.platform.schedulers._bagpipe import BagPipe, BagPipeSpec
from heraldbench.platform.schedulers._base import (
    CacheView,
    Plan,
    RunPlan,
    Scheduler,
    SchedulerSpecBase,
    SyncPolicy,
    SyncRule,
    create,
    from_spec,
    lookup,
    register,
    registered,
    validate_spec,
)
from heraldbench.platform.schedulers._fae import FAE, FAESpec
from heraldbench.platform.schedulers._herald import Herald, HeraldSpec
from heraldbench.platform.schedulers._herald_partition_only import (
    HeraldPartitionOnly,
    HeraldPartitionOnlySpec,
)
from heraldbench.platform.schedulers._herald_plus import HeraldPlus, HeraldPlusSpec
from heraldbench.platform.schedulers._herald_sync_only import HeraldSyncOnly, HeraldSyncOnlySpec
from heraldbench.platform.schedulers._het import HET, HETSpec
from heraldbench.platform.schedulers._naive import BASELINE, Naive, NaiveSpec
from heraldbench.platform.schedulers._plugins import (
    ENTRY_POINT_GROUP,
    discover_plugins,
    plugin_errors,
)

__all__ = [
    "BASELINE",
    "ENTRY_POINT_GROUP",
    "HET",
    "BagPipe",
    "BagPipeSpec",
    "CacheView",
    "FAE",
    "FAESpec",
    "HETSpec",
    "Herald",
    "HeraldPartitionOnly",
    "HeraldPartitionOnlySpec",
    "HeraldPlus",
    "HeraldPlusSpec",
    "HeraldSpec",
    "HeraldSyncOnly",
    "HeraldSyncOnlySpec",
    "Naive",
    "NaiveSpec",
    "Plan",
    "RunPlan",
    "Scheduler",
    "SchedulerSpecBase",
    "SyncPolicy",
    "SyncRule",
    "create",
    "discover_plugins",
    "from_spec",
    "lookup",
    "plugin_errors",
    "register",
    "registered",
    "validate_spec",
]

discover_plugins()  # schedulers of other installed packages (entry-point group above)
