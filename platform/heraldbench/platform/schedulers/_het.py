"""het: HET's cache with bounded staleness on reads and writes (Miao et al., VLDB'22)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from heraldbench.platform.contract import ReadRules
from heraldbench.platform.data import TraceSource
from heraldbench.platform.schedulers._base import (
    CacheView,
    RunPlan,
    Scheduler,
    SchedulerSpecBase,
    SyncPolicy,
    SyncRule,
    register,
)
from heraldbench.platform.schedulers._composed import RANDOM, variant_field

__all__ = ["HET", "HETSpec"]

#: The simulator keeps each copy's clock lead in the smallest integer type whose maximum exceeds
#: the bound (int32 at most), saturating there, so that a saturated lead still reads as stale.
_MAX_BOUND = 2**31 - 2


class HETSpec(SchedulerSpecBase):
    kind: Literal["het"] = "het"
    bound: int = Field(
        100, ge=0, le=_MAX_BOUND,
        description="staleness bound s: clock lead tolerated, updates held (HET: 100)",
    )
    clock_unit: Literal["occurrence", "iteration"] = Field(
        "occurrence", description="a clock tick per id occurrence (HET's code) or per iteration"
    )
    policy: Literal["lru", "lfu", "lfuopt"] | None = Field(
        None, description="HET's cache policy; None uses the spec's cache policy"
    )
    variant: Literal["normative", "released"] = variant_field()


#: HET's released cache (hetu/v1/src/hetu_cache/src/cache.cc): a worker's keys are looked up
#: sorted, so its cache is touched in ascending id; its LFU and LFUOpt caches insert misses
#: after the lookups, evicting as they insert (contract.ReadRules.lfu_on_insert).
HET_RELEASED = ReadRules(ascending=True, lfu_on_insert=True)


@register
class HET(Scheduler):
    """HET's cache with bounded staleness (docs/semantics.md, "Bounded staleness").

    Every cached row carries the PS clock it was last synced at and the updates made to it
    locally since. A read re-pulls the row only when the PS clock leads by more than ``bound``; a
    row is pushed once more than ``bound`` local updates accumulate, and always when evicted
    dirty. Reads within the bound are hits on a possibly stale copy: that is HET's trade, and the
    trainer measures its accuracy cost. ``bound: 0`` gives exactly naive's traffic. Inputs are
    partitioned as naive's (same seed, same partitions), so the comparison isolates staleness.
    ``variant: released`` reproduces the released cache's touch order and its LFU and LFUOpt
    insertion (:data:`HET_RELEASED`, docs/conformance.md).
    """

    kind = "het"
    spec_cls = HETSpec

    def plan_run(self, trace: TraceSource) -> RunPlan:
        spec = self.spec
        reads = HET_RELEASED if spec.variant == "released" else ReadRules()  # type: ignore[attr-defined]
        return RunPlan(trace, cache_policy=spec.policy, reads=reads)  # type: ignore[attr-defined]

    @property
    def sync_policy(self) -> SyncPolicy:
        spec = self.spec
        return SyncPolicy(
            SyncRule.BOUNDED_STALENESS, bound=spec.bound, clock_unit=spec.clock_unit  # type: ignore[attr-defined]
        )

    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        return RANDOM.assign(self, ids, view, iteration)  # naive's partitions
