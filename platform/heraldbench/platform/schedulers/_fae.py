"""fae: hot rows replicated on every worker, hot and cold batches scheduled apart (Adnan et al.,
PVLDB'22).

Modelling assumptions (FAE's ``dlrm_input_profiler.py`` and ``dlrm_fae.py``, docs/semantics.md "Replicated rows"):

* **Profile.** ``round(sampling_rate × samples)`` positions are drawn uniformly *with
  replacement* (FAE's ``dlrm_input_profiler.py``), streamed chunk by chunk; every id of a drawn
  sample counts one access, all tables ranked jointly.
* **Hot set.** The top-N rows by sampled count, ties broken by smaller row id; a row never
  sampled is never hot, so H can be smaller than N. N is ``ceil(hot_ratio × rows)`` (Herald's
  baseline: 1%) or ``hot_budget // (embedding_dim × 4)`` (FAE's GPU budget, fp32 rows).
* **Inputs.** A sample is hot iff *every* one of its ids is in H.
* **Order.** The trace is replayed as pure global batches: cold batches first, then hot ones,
  each class in trace order. ``switch_period`` None switches once (FAE's public trainer);
  r alternates at most r cold then r hot batches until both classes run out. A class's trailing
  partial batch is dropped.
* **Cold batches** are naive's: the same seeded random partition, write-through.
* **Released** (``variant: released``): FAE's own profiler, defects included: its sample is
  ``int(percent/100 × samples)`` positions from numpy's legacy ``randint`` (seeded from the
  spec's seed), and its hot set is the first N rows of numpy's unstable ``argsort`` of all
  counts, reversed: ties at the threshold fall where that sort leaves them (it differs between
  CPUs), and rows never sampled are hot when fewer than N rows were sampled. The rest (inputs,
  order, batches) is as above.
* **Hot batches** touch no cache; their gradients are all-reduced: all |H| rows (``dense``,
  Herald's FAE baseline) or the batch's distinct rows (``sparse``). The simulator loads H on
  every worker when a hot phase starts and writes one replica back when it ends.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import ConfigDict, Field, field_validator, model_validator

from heraldbench.platform.data import SampleChunk, SpilledTrace, TraceSource
from heraldbench.platform.exceptions import DataError
from heraldbench.platform.schedulers._base import (
    CacheView,
    Plan,
    RunPlan,
    Scheduler,
    SchedulerSpecBase,
    SyncPolicy,
    SyncRule,
    register,
)
from heraldbench.platform.schedulers._composed import RANDOM
from heraldbench.platform.schedulers.fae_profile import (
    READ_SAMPLES,
    bits_between,
    find_hot_samples,
    hot_row_bits,
    released_access_counts,
    released_top_rows,
    sample_access_counts,
    top_rows,
)
from heraldbench.platform.units import BYTES_PER_VALUE, parse_bytes

__all__ = ["FAE", "FAESpec", "FAETrace", "HotProfile"]

#: Default share of all rows that is hot (Herald's FAE baseline: 1% of Criteo's rows).
_DEFAULT_HOT_RATIO = 0.01


class FAESpec(SchedulerSpecBase):
    """Knobs of FAE. Give at most one of ``hot_ratio`` and ``hot_budget``; neither means 1%.

    Attributes:
        hot_ratio: hot rows as a share of all embedding rows (N = ceil(ratio × rows)).
        hot_budget: bytes for the hot table, e.g. ``"256MiB"`` (FAE's default);
            N = budget // (embedding_dim × 4).
        embedding_dim: row width used to turn ``hot_budget`` into rows; ignored with a ratio.
        sampling_rate: share of the trace drawn, with replacement, to count accesses.
        switch_period: None switches from cold to hot once; r alternates ≤ r cold, ≤ r hot.
        allreduce: ``dense`` all-reduces |H| rows per hot batch, ``sparse`` the batch's rows.
        variant: ``normative`` (the default: the rules above, ties to smaller ids, only sampled
            rows hot) or ``released``: FAE's ``dlrm_input_profiler.py`` as published (its
            ``sampling_rate`` must then be a whole percent, as its integer flag is).
    """

    #: One hot size (the validators below), as JSON Schema says it (the OpenAPI document): not
    #: both given, and not hot_ratio null without a hot_budget.
    model_config = ConfigDict(json_schema_extra={
        "not": {"required": ["hot_ratio", "hot_budget"],
                "properties": {"hot_ratio": {"not": {"type": "null"}},
                               "hot_budget": {"not": {"type": "null"}}}},
        "anyOf": [
            {"not": {"required": ["hot_ratio"], "properties": {"hot_ratio": {"type": "null"}}}},
            {"required": ["hot_budget"], "properties": {"hot_budget": {"not": {"type": "null"}}}},
        ],
    })  # fmt: skip

    kind: Literal["fae"] = "fae"
    hot_ratio: float | None = Field(
        _DEFAULT_HOT_RATIO, gt=0.0, le=1.0, description="hot rows as a share of all rows (1%)"
    )
    hot_budget: int | str | None = Field(
        None, description="bytes for the hot table, e.g. '256MiB'; replaces hot_ratio"
    )
    embedding_dim: int = Field(128, ge=1, le=65536, description="row width for hot_budget")
    sampling_rate: float = Field(
        0.05, gt=0.0, le=1.0, description="share of samples drawn to profile (FAE DLRM: 5%)"
    )
    switch_period: int | None = Field(
        None, ge=1, description="None: all cold then all hot; r: alternate r cold, r hot batches"
    )
    allreduce: Literal["dense", "sparse"] = Field(
        "dense", description="all-reduce every hot row (Herald's baseline) or the batch's rows"
    )
    variant: Literal["normative", "released"] = Field(
        "normative", description="normative rules, or FAE's released profiler, defects included"
    )

    @model_validator(mode="before")
    @classmethod
    def _budget_replaces_ratio(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("hot_budget") is not None:
            if data.get("hot_ratio") is not None:
                raise ValueError(
                    f"give one of hot_ratio or hot_budget, got both (hot_ratio="
                    f"{data['hot_ratio']!r}, hot_budget={data['hot_budget']!r})"
                )
            data = {**data, "hot_ratio": None}
        return data

    @field_validator("hot_budget")
    @classmethod
    def _parse_budget(cls, value: int | str | None) -> int | None:
        return None if value is None else parse_bytes(value)

    @model_validator(mode="after")
    def _one_hot_size(self) -> FAESpec:
        if self.hot_ratio is None and self.hot_budget is None:
            raise ValueError("give one of hot_ratio or hot_budget, got neither")
        if self.hot_budget is not None and self.hot_budget < self._row_bytes:
            raise ValueError(
                f"hot_budget {self.hot_budget} B is smaller than one row of embedding_dim "
                f"{self.embedding_dim} ({self._row_bytes} B)"
            )
        return self

    @model_validator(mode="after")
    def _released_rate_is_whole_percent(self) -> FAESpec:
        whole = abs(self.sampling_rate * 100 - self.sampling_percent) <= 1e-9
        if self.variant == "released" and not whole:
            raise ValueError(
                f"variant 'released' samples a whole percent (FAE's --ip-sampling-rate is an "
                f"integer), got sampling_rate {self.sampling_rate!r}"
            )
        return self

    @property
    def sampling_percent(self) -> int:
        """``sampling_rate`` as FAE's integer percent flag (rounded)."""
        return round(self.sampling_rate * 100)

    @property
    def _row_bytes(self) -> int:
        return self.embedding_dim * BYTES_PER_VALUE

    def hot_row_target(self, total_rows: int) -> int:
        """N, the size of the hot set before profiling: at most ``total_rows``."""
        if self.hot_budget is not None:
            return min(total_rows, int(self.hot_budget) // self._row_bytes)
        return min(total_rows, math.ceil(self.hot_ratio * total_rows))  # type: ignore[operator]


@dataclass(frozen=True)
class HotProfile:
    """Outcome of FAE's offline phase on one trace.

    Attributes:
        hot_rows: sorted int32 global ids of H.
        sampled_samples: samples drawn (with replacement) for the counts.
        hot_samples: samples of the source whose ids are all hot.
        cold_samples: the other samples.
    """

    hot_rows: np.ndarray
    sampled_samples: int
    hot_samples: int
    cold_samples: int

    @property
    def hot_input_share(self) -> float:
        total = self.hot_samples + self.cold_samples
        return self.hot_samples / total if total else 0.0


@register
class FAE(Scheduler):
    """FAE in a distributed PS setting, as Herald's baseline adapts it (docs/semantics.md).

    :meth:`plan_run` profiles the trace, fixes the hot set H (the plan's ``replicated_rows``)
    and replays the trace reordered into pure hot and pure cold global batches
    (:class:`FAETrace`). Cold batches are naive's; a hot batch is served by H, replicated on every worker and kept identical by
    all-reduce, so it touches no cache. Which batches are hot is known from the phase plan fixed
    in :meth:`plan_run`; before it runs, every batch is cold (naive).
    """

    kind = "fae"
    spec_cls = FAESpec

    def __init__(self, spec: SchedulerSpecBase, *, workers: int, batch_size: int, seed: int = 0):
        super().__init__(spec, workers=workers, batch_size=batch_size, seed=seed)
        self.profile: HotProfile | None = None
        self._hot_rows = np.zeros(0, np.int32)
        self._batch_is_hot = np.zeros(0, dtype=bool)

    @property
    def sync_policy(self) -> SyncPolicy:
        return SyncPolicy(SyncRule.WRITE_THROUGH)  # cold batches; hot ones do not touch caches

    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        return RANDOM.assign(self, ids, view, iteration)  # naive's partitions

    def is_hot(self, iteration: int) -> bool:
        """Whether global batch ``iteration`` of the prepared trace is a hot batch."""
        return iteration < self._batch_is_hot.size and bool(self._batch_is_hot[iteration])

    def plan(self, ids: np.ndarray, view: CacheView, iteration: int) -> Plan:
        assign = self.partition(ids, view, iteration)
        if not self.is_hot(iteration):
            return Plan(assign)
        if self.spec.allreduce == "dense":  # type: ignore[attr-defined]
            rows = len(self._hot_rows)
        else:
            rows = int(np.unique(ids).size)
        return Plan(assign, replicated=True, allreduce_rows=rows)

    def plan_run(self, trace: TraceSource) -> RunPlan:
        spec: FAESpec = self.spec  # type: ignore[assignment]
        # FAE passes over the trace four times (sampling, the hot/cold split, then each class);
        # a source that must be read through each time is spilled to disk on the first.
        trace = trace if trace.random_access else SpilledTrace(trace)
        target = spec.hot_row_target(trace.layout.total_rows)
        if spec.variant == "released":
            counts, sampled = released_access_counts(trace, spec.sampling_percent, self.seed)
            hot_rows = released_top_rows(counts, target)
        else:
            rng = np.random.default_rng([self.seed, 0xFAE])
            counts, sampled = sample_access_counts(trace, spec.sampling_rate, rng)
            hot_rows = top_rows(counts, target)
        is_hot = find_hot_samples(trace, hot_row_bits(hot_rows, trace.layout.total_rows))
        hot_samples = int(np.bitwise_count(is_hot).sum())
        self.profile = HotProfile(hot_rows, sampled, hot_samples, trace.num_samples - hot_samples)
        prepared = FAETrace(trace, is_hot, self.profile, self.global_batch, spec.switch_period)
        self._hot_rows, self._batch_is_hot = hot_rows, prepared.batch_is_hot()
        return RunPlan(prepared, replicated_rows=hot_rows)


def phase_plan(hot_batches: int, cold_batches: int, period: int | None) -> list[tuple[bool, int]]:
    """Phases as (hot?, batches), cold first; with a period, alternate until both run out."""
    step = max(hot_batches, cold_batches, 1) if period is None else period
    phases: list[tuple[bool, int]] = []
    left = {False: cold_batches, True: hot_batches}
    while left[False] or left[True]:
        for hot in (False, True):
            run = min(step, left[hot])
            left[hot] -= run
            if not run:
                continue
            if phases and phases[-1][0] == hot:  # the other class ran out: one longer phase
                run += phases.pop()[1]
            phases.append((hot, run))
    return phases


class FAETrace(TraceSource):
    """A trace replayed as pure hot and pure cold global batches, in FAE's phase order.

    It streams: one pass over the source per class, interleaved phase by phase, reading only
    that class's samples where the source has random access; memory grows by one bit per sample
    (which class it is in). Each class keeps its trace order. The last
    ``hot_samples mod B`` hot samples and ``cold_samples mod B`` cold samples (B the global
    batch) are dropped and reported as ``samples_dropped_by_reordering``.

    Args:
        source: the original trace.
        is_hot: which samples of ``source`` are hot, a bitset (:func:`find_hot_samples`).
        profile: the profile ``is_hot`` came from.
        global_batch: B = W·m.
        switch_period: see :class:`FAESpec`.
    """

    def __init__(
        self,
        source: TraceSource,
        is_hot: np.ndarray,
        profile: HotProfile,
        global_batch: int,
        switch_period: int | None,
    ):
        self.source, self.is_hot, self.profile = source, is_hot, profile
        self.global_batch, self.switch_period = global_batch, switch_period
        self.layout, self.num_dense = source.layout, source.num_dense
        hot_batches = profile.hot_samples // global_batch
        cold_batches = profile.cold_samples // global_batch
        self.phases = phase_plan(hot_batches, cold_batches, switch_period)
        self.num_samples = (hot_batches + cold_batches) * global_batch
        self.samples_dropped_by_reordering = source.num_samples - self.num_samples

    def batch_is_hot(self) -> np.ndarray:
        """Per global batch, in replay order, whether it is hot."""
        flags = [hot for hot, _ in self.phases]
        return np.repeat(np.array(flags, dtype=bool), [n for _, n in self.phases])

    def describe(self) -> dict[str, Any]:
        hot_batches = int(self.batch_is_hot().sum())
        return {
            **self.source.describe(),
            "samples": self.num_samples,
            "source_samples": self.source.num_samples,
            "hot_rows": int(self.profile.hot_rows.size),
            "hot_input_share": self.profile.hot_input_share,
            "sampled_samples": self.profile.sampled_samples,
            "switch_period": self.switch_period,
            "phases": len(self.phases),
            "hot_batches": hot_batches,
            "cold_batches": self.num_samples // self.global_batch - hot_batches,
            "samples_dropped_by_reordering": self.samples_dropped_by_reordering,
            "ends_in_hot_phase": bool(self.phases) and self.phases[-1][0],
        }

    def _blocks(self) -> Iterator[SampleChunk]:
        return self._replayed(ids_only=False)

    def _id_blocks(self) -> Iterator[SampleChunk]:
        return self._replayed(ids_only=True)

    def _replayed(self, ids_only: bool) -> Iterator[SampleChunk]:
        streams = {
            hot: _ClassStream(self._samples_of_class(hot, ids_only)) for hot in (False, True)
        }
        for hot, batches in self.phases:
            yield from streams[hot].take(batches * self.global_batch)

    def _samples_of_class(self, hot: bool, ids_only: bool) -> Iterator[SampleChunk]:
        """The source's samples of one class in order (their ids alone with ``ids_only``): only
        those read where the source has random access, else the source read through and
        filtered."""
        total = self.source.num_samples
        if self.source.random_access:
            for start in range(0, total, READ_SAMPLES):
                stop = min(start + READ_SAMPLES, total)
                keep = start + np.flatnonzero(bits_between(self.is_hot, start, stop) == hot)
                if not keep.size:
                    continue
                if ids_only:
                    yield self.source.id_samples_at(keep)
                else:
                    yield self.source.samples_at(keep)
            return
        start = 0
        for chunk in self.source.chunks(READ_SAMPLES, ids_only):
            keep = bits_between(self.is_hot, start, start + len(chunk)) == hot
            start += len(chunk)
            if not keep.any():
                continue
            yield chunk.take(np.flatnonzero(keep))


class _ClassStream:
    """Hands out the samples of one filtered iterator in runs of a requested length."""

    def __init__(self, chunks: Iterator[SampleChunk]):
        self._chunks = chunks
        self._rest: SampleChunk | None = None

    def take(self, n: int) -> Iterator[SampleChunk]:
        while n > 0:
            chunk = self._rest if self._rest is not None else next(self._chunks, None)
            if chunk is None:
                raise DataError(f"the source trace ended {n} samples short of its profile")
            self._rest = chunk.slice(n, len(chunk)) if len(chunk) > n else None
            head = chunk.slice(0, min(n, len(chunk)))
            n -= len(head)
            yield head
