"""The scheduler family: a small abstract base, typed specs and a name registry.

A scheduler *decides*; it never counts or moves data. Per iteration it returns the partition of
the global batch over the workers, and it declares the sync rule by which dirty rows reach the
parameter server. Executors (the simulator, the trainer) carry the decisions out.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from heraldbench.platform.data import TraceSource
from heraldbench.platform.exceptions import SpecError, UnknownNameError

__all__ = [
    "CacheView",
    "Plan",
    "Scheduler",
    "SchedulerSpecBase",
    "SyncPolicy",
    "SyncRule",
    "create",
    "register",
    "registered",
]


class SyncRule(enum.Enum):
    """How dirty rows reach the parameter server (docs/semantics.md, "Syncs")."""

    WRITE_THROUGH = "write-through"  # every updated row is pushed after every iteration
    ON_DEMAND = "on-demand"  # pushed only when another worker reads it within the window
    BOUNDED_STALENESS = "bounded-staleness"  # HET: per-row clocks, reads and writes within a bound


@dataclass(frozen=True)
class SyncPolicy:
    rule: SyncRule
    window: int = 1  # iterations looked ahead by ON_DEMAND; 1 is Herald
    bound: int = 0  # BOUNDED_STALENESS: clock lead tolerated on reads, updates held on writes
    clock_unit: str = "occurrence"  # BOUNDED_STALENESS: a clock tick per id occurrence or iteration
    direct: bool = False  # ON_DEMAND: a needed dirty row goes straight to its reader, not via the PS

    def __post_init__(self) -> None:
        if self.window < 1:
            raise SpecError(f"sync window must be >= 1 iteration, got {self.window}")

    @property
    def lag(self) -> int:
        """Iterations of future reads the executor must know before syncing an iteration."""
        return self.window if self.rule is SyncRule.ON_DEMAND else 0


@dataclass(frozen=True)
class CacheView:
    """What a scheduler may look at when it decides: the state at the end of the last iteration.

    Attributes:
        valid: per global row, a bitmask of the workers holding a valid copy (bit w = worker w).
        cached: per global row, a bitmask of the workers holding any copy.
        claims, tally: per global row, scratch a partition may use (a worker bitmask of
            ``valid``'s dtype and an int32), zero on entry and to be left zero on return. The
            simulator keeps them next to each row's state, so marking the rows of a batch costs
            no extra memory traffic; None where no such scratch is offered.
    """

    valid: np.ndarray
    cached: np.ndarray
    claims: np.ndarray | None = None
    tally: np.ndarray | None = None


@dataclass(frozen=True)
class Plan:
    """A scheduler's decisions for one iteration.

    Attributes:
        assign: (W·m,) worker of each sample.
        replicated: the batch is served entirely by a table replicated on every worker and kept
            in sync by all-reduce (FAE's hot batches); it does not touch the caches.
        allreduce_rows: rows all-reduced this iteration (before the ring factor).
    """

    assign: np.ndarray
    replicated: bool = False
    allreduce_rows: int = 0


class SchedulerSpecBase(BaseModel):
    """Base of every scheduler spec: a ``kind`` tag plus the scheduler's knobs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def knobs(self) -> dict[str, Any]:
        return self.model_dump(exclude={"kind"})

    def label(self) -> str:
        """The kind plus the knobs set away from their defaults: ``herald lookahead=2``."""
        changed = self.model_dump(exclude={"kind"}, exclude_defaults=True)
        return " ".join([self.kind, *(f"{k}={v}" for k, v in changed.items())])  # type: ignore[attr-defined]


class Scheduler(abc.ABC):
    """Decides the partition of each global batch and the sync rule.

    Args:
        spec: the scheduler's typed spec.
        workers: number of workers W.
        batch_size: samples per worker per iteration m.
        seed: seed of every random choice the scheduler makes.
    """

    kind: ClassVar[str]
    spec_cls: ClassVar[type[SchedulerSpecBase]]

    def __init__(self, spec: SchedulerSpecBase, *, workers: int, batch_size: int, seed: int = 0):
        if not 1 <= workers <= 64:
            raise SpecError(f"workers must be between 1 and 64, got {workers}")
        if batch_size < 1:
            raise SpecError(f"batch_size must be >= 1 sample per worker, got {batch_size}")
        self.spec = spec
        self.workers = workers
        self.batch_size = batch_size
        self.seed = seed

    @property
    def global_batch(self) -> int:
        return self.workers * self.batch_size

    @property
    @abc.abstractmethod
    def sync_policy(self) -> SyncPolicy:
        """The sync rule the executor applies after every iteration."""

    @abc.abstractmethod
    def partition(self, ids: np.ndarray, view: CacheView, iteration: int) -> np.ndarray:
        """Assign the samples of one global batch to workers.

        Args:
            ids: (W·m, F) global row ids of the batch, in trace order.
            view: cache state at the end of the previous iteration.
            iteration: index b of the batch.

        Returns:
            (W·m,) worker index of each sample; every worker gets exactly m samples.
        """

    def plan(self, ids: np.ndarray, view: CacheView, iteration: int) -> Plan:
        """All decisions of one iteration; by default just the partition."""
        return Plan(self.partition(ids, view, iteration))

    def prepare(self, trace: TraceSource) -> TraceSource:
        """The trace the scheduler runs on; FAE reorders samples into hot and cold batches."""
        return trace

    def executor(self) -> Callable[..., Any] | None:
        """A simulator of the scheduler's own, for systems whose cache model differs from the
        per-worker one (BagPipe's logically replicated cache); None uses the shared simulator.
        It is called as ``simulate`` is and returns a ``SimResult``."""
        return None

    #: Cache policy the scheduler imposes (HET's own knob), or None for the spec's.
    cache_policy: str | None = None

    #: Future global batches whose rows eviction passes over (lookahead-aware replacement); 0 = off.
    replacement_window: int = 0

    #: Rows replicated on every worker (FAE's hot set), or None.
    replicated_rows: np.ndarray | None = None

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.spec.knobs()}


_REGISTRY: dict[str, type[Scheduler]] = {}


def register(cls: type[Scheduler]) -> type[Scheduler]:
    """Class decorator adding a scheduler to the name registry."""
    if cls.kind in _REGISTRY:
        raise ValueError(f"scheduler kind {cls.kind!r} is registered twice")
    _REGISTRY[cls.kind] = cls
    return cls


def registered() -> dict[str, type[Scheduler]]:
    """Registered scheduler classes by kind."""
    return dict(_REGISTRY)


def lookup(kind: str) -> type[Scheduler]:
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise UnknownNameError("scheduler", kind, list(_REGISTRY)) from None


def create(kind: str, *, workers: int, batch_size: int, seed: int = 0, **knobs: Any) -> Scheduler:
    """Build a scheduler by name: ``create("herald", workers=8, batch_size=256, lookahead=1)``."""
    cls = lookup(kind)
    try:
        spec = cls.spec_cls.model_validate({"kind": kind, **knobs})
    except ValidationError as exc:
        raise SpecError(f"scheduler {kind!r}: {exc}") from exc
    return cls(spec, workers=workers, batch_size=batch_size, seed=seed)


def from_spec(spec: SchedulerSpecBase, *, workers: int, batch_size: int, seed: int = 0) -> Scheduler:
    """Build the scheduler a validated spec describes."""
    return lookup(spec.kind)(spec, workers=workers, batch_size=batch_size, seed=seed)  # type: ignore[attr-defined]
