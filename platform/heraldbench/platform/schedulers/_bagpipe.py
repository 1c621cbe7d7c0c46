"""bagpipe: BagPipe's Oracle Cacher over a logically replicated cache (Agarwal et al., SOSP'23)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import ConfigDict, Field, model_validator

from heraldbench.platform.contract import OracleWindow
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
from heraldbench.platform.schedulers._composed import RANDOM
from heraldbench.platform.schedulers._partitions import contiguous_partition

__all__ = ["BagPipe", "BagPipeSpec"]


class BagPipeSpec(SchedulerSpecBase):
    """Knobs of BagPipe's Oracle Cacher.

    Attributes:
        lookahead: L, the window ``[b, b+L)`` of batches known when batch b runs.
        cleanup_proportion: cleanup points (evict, then prefetch) every
            ``max(1, int(cleanup_proportion × lookahead))`` iterations.
        variant: ``normative`` (the default: docs/semantics.md, naive's random partition, the
            cache bounded by K, every batch run) or ``released``: what BagPipe's released
            ``oraclecacher.py`` does, defects included: trainer w gets samples
            ``[w·m, (w+1)·m)`` of each batch, K is never looked at, and the last ``lookahead``
            batches never run. Its sync-now set needs batch b+1, which a window of one batch
            lacks, so it takes ``lookahead`` >= 2.
    """

    #: The released variant's window rule (the validator below), as JSON Schema says it.
    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"not": {"required": ["variant"], "properties": {"variant": {"const": "released"}}}},
        {"properties": {"lookahead": {"minimum": 2}}},
    ]})  # fmt: skip

    kind: Literal["bagpipe"] = "bagpipe"
    held_knobs = ("lookahead",)
    lookahead: int = Field(
        200, ge=1, le=1_000_000,
        description="L: batches the oracle sees, the current one included (BagPipe: 200)",
    )  # fmt: skip
    cleanup_proportion: float = Field(
        0.25, gt=0.0, le=1.0,
        description="evict/prefetch every max(1, int(proportion × L)) iterations (BagPipe: 0.25)",
    )  # fmt: skip
    variant: Literal["normative", "released"] = Field(
        "normative", description="normative rules, or the released oracle's (no capacity, ...)"
    )

    @model_validator(mode="after")
    def _released_sees_next_batch(self) -> BagPipeSpec:
        if self.variant == "released" and self.lookahead < 2:
            raise ValueError(
                f"variant 'released' needs lookahead >= 2, got {self.lookahead}: the released "
                "oracle's sync-now set reads batch b+1, outside a one-batch window"
            )
        return self


@register
class BagPipe(Scheduler):
    """BagPipe as its released code implements it (``BagPipe/oraclecacher.py`` and ``bagcache.py``; docs/conformance.md).

    One cache-membership set shared by all trainers, each holding a replica of its rows. An
    oracle looking ``lookahead`` batches ahead prefetches rows before use, every
    ``cleanup_interval`` iterations, and keeps each row until its last use in the window;
    gradients go sync-now (read by the next batch), sync-later (all-reduced overlapped with the
    next step) or no-sync (one occurrence, no reuse: never all-reduced). Unlike the published
    code the cache capacity is enforced. Inputs are partitioned as naive's (same seed, same
    partitions); ``variant: released`` restores the published code's choices instead. Its run
    plan asks for a logically replicated cache run by an oracle
    (:class:`~heraldbench.platform.contract.OracleWindow`); the decision stream's replicated
    state machine (:mod:`heraldbench.platform.sim._replicated`, whose docstring states the
    accounting) decides its reads, prefetches, evictions and all-reduces; the declared
    write-through sync policy is not used by it.
    """

    kind = "bagpipe"
    spec_cls = BagPipeSpec

    @property
    def lookahead(self) -> int:
        return self.spec.lookahead  # type: ignore[attr-defined]

    @property
    def cleanup_interval(self) -> int:
        """Iterations between cleanup points: ``max(1, int(cleanup_proportion × lookahead))``."""
        return max(1, int(self.spec.cleanup_proportion * self.lookahead))  # type: ignore[attr-defined]

    @property
    def sync_policy(self) -> SyncPolicy:
        # Declared for the family's contract; the replicated executor applies its own classes.
        return SyncPolicy(SyncRule.WRITE_THROUGH)

    @property
    def released(self) -> bool:
        return self.spec.variant == "released"  # type: ignore[attr-defined]

    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        if self.released:
            return contiguous_partition(self.global_batch, self.batch_size)
        return RANDOM.assign(self, ids, view, iteration)  # naive's partitions

    def plan_run(self, trace: TraceSource) -> RunPlan:
        released = self.released
        oracle = OracleWindow(self.lookahead, self.cleanup_interval, bounded=not released,
                              runs_tail=not released)  # fmt: skip
        return RunPlan(trace, oracle=oracle)
