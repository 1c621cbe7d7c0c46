"""herald-partition-only: the ablation with Herald's partition and write-through sync."""

from __future__ import annotations

from typing import Literal

from heraldbench.platform.schedulers._base import SchedulerSpecBase, register
from heraldbench.platform.schedulers._composed import (
    LOCATION_AWARE,
    WRITE_THROUGH,
    Composed,
    variant_field,
)

__all__ = ["HeraldPartitionOnly", "HeraldPartitionOnlySpec"]


class HeraldPartitionOnlySpec(SchedulerSpecBase):
    kind: Literal["herald-partition-only"] = "herald-partition-only"
    variant: Literal["normative", "released"] = variant_field()


@register
class HeraldPartitionOnly(Composed):
    """Location-aware partition alone ("partition only" in Herald's Table 1)."""

    kind = "herald-partition-only"
    spec_cls = HeraldPartitionOnlySpec
    partition_rule = LOCATION_AWARE
    sync_rule = WRITE_THROUGH
