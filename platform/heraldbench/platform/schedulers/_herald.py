"""herald: location-aware input partition plus on-demand synchronisation (Zeng et al.)."""

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
from heraldbench.platform.schedulers._partitions import location_aware_partition

__all__ = ["Herald", "HeraldSpec"]


class HeraldSpec(SchedulerSpecBase):
    kind: Literal["herald"] = "herald"
    lookahead: int = Field(
        1, ge=1, le=1000, description="iterations of future reads a dirty row is pushed ahead of"
    )


@register
class Herald(Scheduler):
    """Herald as its released code implements it (research/schedulers.md §1.2–1.3).

    Each sample goes to the worker whose cache holds most of its ids valid, every worker taking
    exactly m samples; a worker pushes an updated row only when another worker reads it within
    ``lookahead`` iterations, or when it evicts it. Lookahead 1 is the published system; a larger
    window pushes earlier (more room to overlap with compute) at the price of re-pushing rows the
    owner updates again before the reader arrives.
    """

    kind = "herald"
    spec_cls = HeraldSpec

    @property
    def sync_policy(self) -> SyncPolicy:
        return SyncPolicy(SyncRule.ON_DEMAND, window=self.spec.lookahead)  # type: ignore[attr-defined]

    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        return location_aware_partition(ids, view.valid, self.workers, self.batch_size, iteration)
