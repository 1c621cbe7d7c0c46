"""herald-plus: Herald with batch-affine partition, lookahead-aware replacement and direct transfer.

heraldbench's own scheduler, built to go further than Herald under the same strict accounting.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import ConfigDict, Field, model_validator

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
from heraldbench.platform.schedulers._partitions import affinity_partition

__all__ = ["HeraldPlus", "HeraldPlusSpec"]


class HeraldPlusSpec(SchedulerSpecBase):
    #: _direct_needs_lookahead_one, as JSON Schema says it (the OpenAPI document).
    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"required": ["direct_transfer"], "properties": {"direct_transfer": {"const": False}}},
        {"properties": {"lookahead": {"const": 1}}},
    ]})  # fmt: skip

    kind: Literal["herald-plus"] = "herald-plus"
    held_knobs = ("lookahead", "replacement_window")
    lookahead: int = Field(1, ge=1, le=64, description="on-demand sync window (iterations)")
    replacement_window: int = Field(
        8, ge=0, le=1024, description="future batches whose rows eviction passes over; 0 = LRU"
    )
    affinity: int = Field(
        32, ge=0, description="co-locate the samples of a batch sharing an id read by at most this "
        "many of them; 0 = off (Herald's partition)"
    )
    direct_transfer: bool = Field(
        True, description="send a needed dirty row straight to its reader (one row-transfer)"
    )

    @model_validator(mode="after")
    def _direct_needs_lookahead_one(self) -> HeraldPlusSpec:
        if self.direct_transfer and self.lookahead != 1:
            raise ValueError(
                f"direct_transfer hands a dirty row to the next iteration's reader, so it needs "
                f"lookahead 1, got lookahead {self.lookahead}"
            )
        return self


@register
class HeraldPlus(Scheduler):
    """Herald's partition and on-demand sync, taken further on three fronts.

    * **Partition with batch affinity**: a sample scores its ids valid at a worker, as in Herald,
      plus its ids already claimed there by earlier samples of the same batch, so the readers of
      a row that is cached nowhere land together: one pull instead of several, and one writer
      instead of co-writers whose partial copies each need a push (strict consistency).
    * **Lookahead-aware replacement**: eviction passes over rows the next
      ``replacement_window`` global batches read (the trace is known ahead in offline
      training), so it drops what is needed furthest in the future first; with no such row left,
      plain LRU decides.
    * **Direct transfer**: a dirty row another worker reads next is sent to that worker, one
      row-transfer counted as its pull, rather than pushed to the PS and pulled back. Partial
      copies of co-written rows still meet at the PS, which sums them.
    """

    kind = "herald-plus"
    spec_cls = HeraldPlusSpec

    def __init__(self, spec: HeraldPlusSpec, *, workers: int, batch_size: int, seed: int = 0):
        super().__init__(spec, workers=workers, batch_size=batch_size, seed=seed)
        self._scratch: tuple[np.ndarray, np.ndarray] | None = None

    def plan_run(self, trace: TraceSource) -> RunPlan:
        spec: HeraldPlusSpec = self.spec  # type: ignore[assignment]
        return RunPlan(trace, replacement_window=spec.replacement_window)

    @property
    def sync_policy(self) -> SyncPolicy:
        spec = self.spec
        return SyncPolicy(
            SyncRule.ON_DEMAND, window=spec.lookahead, direct=spec.direct_transfer  # type: ignore[attr-defined]
        )

    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        valid = view.valid
        if view.claims is not None and view.tally is not None:
            claims, freq = view.claims, view.tally
        else:
            if self._scratch is None or self._scratch[0].shape != valid.shape:
                self._scratch = (np.zeros_like(valid), np.zeros(valid.shape, np.int32))
            claims, freq = self._scratch
        return affinity_partition(
            view.counted(ids), valid, claims, freq, self.workers, self.batch_size, iteration,
            self.spec.affinity,  # type: ignore[attr-defined]
        )  # fmt: skip
