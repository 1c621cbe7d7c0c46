"""Schedulers made of one partition rule and one sync rule (Herald's ``laia_scheduler.cc``; docs/semantics.md).

naive, herald and Herald's two ablations are the 2×2 of {random, location-aware} partition ×
{write-through, on-demand} sync. A scheduler of this family names its two rules and nothing
else::

    @register
    class Naive(Composed):
        kind = "naive"
        spec_cls = NaiveSpec
        partition_rule = RANDOM
        sync_rule = WRITE_THROUGH
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

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
)
from heraldbench.platform.schedulers._partitions import location_aware_partition, random_partition

__all__ = [
    "LOCATION_AWARE",
    "ON_DEMAND",
    "RANDOM",
    "WRITE_THROUGH",
    "Composed",
    "PartitionRule",
    "SyncRuleOf",
    "lookahead_field",
    "variant_field",
]


@dataclass(frozen=True)
class PartitionRule:
    """How a global batch is split over the workers.

    Attributes:
        name: what results call it.
        assign: ``(scheduler, ids (W·m, F), view, iteration) -> (W·m,) worker of each sample``.
    """

    name: str
    assign: Callable[[Scheduler, np.ndarray, CacheView, int], np.ndarray]


@dataclass(frozen=True)
class SyncRuleOf:
    """How dirty rows reach the PS, from the scheduler's spec.

    Attributes:
        name: what results call it.
        policy: ``spec -> SyncPolicy``.
    """

    name: str
    policy: Callable[[Any], SyncPolicy]


#: naive's: a seeded random permutation per iteration, m samples per worker.
RANDOM = PartitionRule(
    "random",
    lambda s, ids, view, it: random_partition(s.global_batch, s.batch_size, s.seed, it),
)
#: Herald's: each sample to the worker holding most of its ids valid, m samples per worker.
LOCATION_AWARE = PartitionRule(
    "location-aware",
    lambda s, ids, view, it: location_aware_partition(view.counted(ids), view.valid, s.workers,
                                                      s.batch_size, it),
)
#: Every updated row is pushed after every iteration.
WRITE_THROUGH = SyncRuleOf("write-through", lambda spec: SyncPolicy(SyncRule.WRITE_THROUGH))
#: A dirty row is pushed when another worker reads it within ``spec.lookahead`` iterations.
ON_DEMAND = SyncRuleOf(
    "on-demand", lambda spec: SyncPolicy(SyncRule.ON_DEMAND, window=spec.lookahead)
)


def lookahead_field() -> Any:
    """The ``lookahead`` knob of an on-demand spec (its window, in iterations)."""
    return Field(
        1, ge=1, le=1000, description="iterations of future reads a dirty row is pushed ahead of"
    )


def variant_field() -> Any:
    """The ``variant`` knob: the normative rules of docs/semantics.md, or the released code's."""
    return Field(
        "normative",
        description="normative: docs/semantics.md; released: as the authors' released code does "
        "it (docs/conformance.md)",
    )


#: Herald's released snapshot cache (laia/include/mini_lru_cache.h, read by the loop of
#: laia/src/laia_scheduler.cc): an LRU cache whose keys are read in ascending id, which evicts
#: as it inserts, and which outdates a key a worker pushes for others before the worker reads it.
HERALD_RELEASED = ReadRules(ascending=True, evict_on_insert=True, reread_pushed=True)


class Composed(Scheduler):
    """A scheduler that is exactly one partition rule and one sync rule.

    A spec with ``variant: released`` (Herald and its ablations) runs on Herald's released
    cache rules: :data:`HERALD_RELEASED`, LRU, and co-writers' copies left valid (the
    ``optimistic`` rule; the released snapshot marks every reader's copy valid), whatever the
    spec's cache policy and consistency.
    """

    partition_rule: ClassVar[PartitionRule]
    sync_rule: ClassVar[SyncRuleOf]

    def __init__(self, spec: SchedulerSpecBase, *, workers: int, batch_size: int, seed: int = 0):
        super().__init__(spec, workers=workers, batch_size=batch_size, seed=seed)
        self._sync = self.sync_rule.policy(spec)

    @property
    def sync_policy(self) -> SyncPolicy:
        return self._sync

    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        return self.partition_rule.assign(self, ids, view, iteration)

    def plan_run(self, trace: TraceSource) -> RunPlan:
        if getattr(self.spec, "variant", "normative") == "released":
            return RunPlan(trace, cache_policy="lru", consistency="optimistic",
                           reads=HERALD_RELEASED)  # fmt: skip
        return RunPlan(trace)
