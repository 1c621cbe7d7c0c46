"""naive: random input partition, every updated row written through after every iteration."""

from __future__ import annotations

from typing import Literal

from heraldbench.platform.schedulers._base import SchedulerSpecBase, register
from heraldbench.platform.schedulers._composed import RANDOM, WRITE_THROUGH, Composed

__all__ = ["BASELINE", "Naive", "NaiveSpec"]

#: The scheduler every relative figure divides by (a run against naive of the same trace).
BASELINE = "naive"


class NaiveSpec(SchedulerSpecBase):
    kind: Literal["naive"] = "naive"


@register
class Naive(Composed):
    """The baseline every relative figure divides by (Herald's baseline; docs/semantics.md).

    It equals HET with bound 0 under BSP: a cached row is re-pulled once anyone else updated it,
    and every row a worker trained is pushed after the iteration, so evictions are free.
    """

    kind = BASELINE
    spec_cls = NaiveSpec
    partition_rule = RANDOM
    sync_rule = WRITE_THROUGH
