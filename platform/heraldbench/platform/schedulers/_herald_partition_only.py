"""herald-partition-only: the ablation with Herald's partition and write-through sync."""

from __future__ import annotations

from typing import Literal

import numpy as np

from heraldbench.platform.schedulers._base import (
    CacheView,
    Scheduler,
    SchedulerSpecBase,
    SyncPolicy,
    SyncRule,
    register,
)
from heraldbench.platform.schedulers._partitions import location_aware_partition

__all__ = ["HeraldPartitionOnly", "HeraldPartitionOnlySpec"]


class HeraldPartitionOnlySpec(SchedulerSpecBase):
    kind: Literal["herald-partition-only"] = "herald-partition-only"


@register
class HeraldPartitionOnly(Scheduler):
    """Location-aware partition alone ("partition only" in Herald's Table 1)."""

    kind = "herald-partition-only"
    spec_cls = HeraldPartitionOnlySpec

    @property
    def sync_policy(self) -> SyncPolicy:
        return SyncPolicy(SyncRule.WRITE_THROUGH)

    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        return location_aware_partition(ids, view.valid, self.workers, self.batch_size, iteration)
