"""naive: random input partition, every updated row written through after every iteration."""

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
from heraldbench.platform.schedulers._partitions import random_partition

__all__ = ["Naive", "NaiveSpec"]


class NaiveSpec(SchedulerSpecBase):
    kind: Literal["naive"] = "naive"


@register
class Naive(Scheduler):
    """The baseline every relative figure divides by (research/schedulers.md §1.7).

    It equals HET with bound 0 under BSP: a cached row is re-pulled once anyone else updated it,
    and every row a worker trained is pushed after the iteration, so evictions are free.
    """

    kind = "naive"
    spec_cls = NaiveSpec

    @property
    def sync_policy(self) -> SyncPolicy:
        return SyncPolicy(SyncRule.WRITE_THROUGH)

    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        return random_partition(self.global_batch, self.batch_size, self.seed, iteration)
