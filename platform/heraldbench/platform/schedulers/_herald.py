"""herald: location-aware input partition plus on-demand synchronisation (Zeng et al.)."""

from __future__ import annotations

from typing import Literal

from heraldbench.platform.schedulers._base import SchedulerSpecBase, register
from heraldbench.platform.schedulers._composed import (
    LOCATION_AWARE,
    ON_DEMAND,
    Composed,
    lookahead_field,
    variant_field,
)

__all__ = ["Herald", "HeraldSpec"]


class HeraldSpec(SchedulerSpecBase):
    kind: Literal["herald"] = "herald"
    held_knobs = ("lookahead",)
    lookahead: int = lookahead_field()
    variant: Literal["normative", "released"] = variant_field()


@register
class Herald(Composed):
    """Herald's released ``LaiaScheduler`` under docs/semantics.md's accounting.

    Each sample goes to the worker whose cache holds most of its ids valid, every worker taking
    exactly m samples; a worker pushes an updated row only when another worker reads it within
    ``lookahead`` iterations, or when it evicts it. Lookahead 1 is the published system; a larger
    window pushes earlier (more room to overlap with compute) at the price of re-pushing rows the
    owner updates again before the reader arrives. ``variant: released`` runs on the released
    code's own cache rules (:class:`Composed`, docs/conformance.md).
    """

    kind = "herald"
    spec_cls = HeraldSpec
    partition_rule = LOCATION_AWARE
    sync_rule = ON_DEMAND
