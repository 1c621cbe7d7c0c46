"""herald-sync-only: the ablation with random partition and Herald's on-demand sync."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from heraldbench.platform.schedulers._base import (
    CacheView,
    Scheduler,
    SchedulerSpecBase,
    SyncPolicy,
    SyncRule,
    register,
)
from heraldbench.platform.schedulers._partitions import random_partition

__all__ = ["HeraldSyncOnly", "HeraldSyncOnlySpec"]


class HeraldSyncOnlySpec(SchedulerSpecBase):
    kind: Literal["herald-sync-only"] = "herald-sync-only"
    lookahead: int = Field(1, ge=1, le=1000)


@register
class HeraldSyncOnly(Scheduler):
    """On-demand sync alone ("on-demand only" in Herald's Table 1); partitions are naive's."""

    kind = "herald-sync-only"
    spec_cls = HeraldSyncOnlySpec

    @property
    def sync_policy(self) -> SyncPolicy:
        return SyncPolicy(SyncRule.ON_DEMAND, window=self.spec.lookahead)  # type: ignore[attr-defined]

    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        return random_partition(self.global_batch, self.batch_size, self.seed, iteration)
