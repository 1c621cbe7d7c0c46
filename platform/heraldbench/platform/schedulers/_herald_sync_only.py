"""herald-sync-only: the ablation with random partition and Herald's on-demand sync."""

from __future__ import annotations

from typing import Literal

from heraldbench.platform.schedulers._base import SchedulerSpecBase, register
from heraldbench.platform.schedulers._composed import (
    ON_DEMAND,
    RANDOM,
    Composed,
    lookahead_field,
    variant_field,
)

__all__ = ["HeraldSyncOnly", "HeraldSyncOnlySpec"]


class HeraldSyncOnlySpec(SchedulerSpecBase):
    kind: Literal["herald-sync-only"] = "herald-sync-only"
    held_knobs = ("lookahead",)
    lookahead: int = lookahead_field()
    variant: Literal["normative", "released"] = variant_field()


@register
class HeraldSyncOnly(Composed):
    """On-demand sync alone ("on-demand only" in Herald's Table 1); partitions are naive's."""

    kind = "herald-sync-only"
    spec_cls = HeraldSyncOnlySpec
    partition_rule = RANDOM
    sync_rule = ON_DEMAND
