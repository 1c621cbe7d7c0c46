"""The scheduler family: a small abstract base, typed specs and a name registry.

A scheduler *decides*; it never counts or moves data. Per iteration it returns the partition of
the global batch over the workers, and it declares the sync rule by which dirty rows reach the
parameter server. Executors (the simulator, the trainer) carry the decisions out.
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from heraldbench.platform.contract import CacheView, Plan, RunPlan
from heraldbench.platform.data import TraceSource
from heraldbench.platform.exceptions import SpecError, UnknownNameError

__all__ = [
    "CacheView",
    "Plan",
    "RunPlan",
    "Scheduler",
    "SchedulerSpecBase",
    "SyncPolicy",
    "SyncRule",
    "create",
    "register",
    "registered",
    "validate_spec",
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


class SchedulerSpecBase(BaseModel):
    """Base of every scheduler spec: a ``kind`` tag plus the scheduler's knobs."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: Knobs counting batches of the trace the scheduler holds ahead of the one it runs (its
    #: look-ahead windows): what they cost in memory is estimated before a run (resources.py).
    held_knobs: ClassVar[tuple[str, ...]] = ()

    def held_batches(self) -> int:
        """Batches held ahead of the one running (:attr:`held_knobs` added up)."""
        return sum(int(getattr(self, name)) for name in self.held_knobs)

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

    def plan_run(self, trace: TraceSource) -> RunPlan:
        """What this run needs from every executor, fixed before it starts (see
        :class:`RunPlan`); by default the trace as given, per-worker caches, nothing else.

        Called once per run, before the first :meth:`plan`; a scheduler that reorders the
        trace (FAE) returns the reordered trace here.
        """
        return RunPlan(trace)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.spec.knobs()}


_REGISTRY: dict[str, type[Scheduler]] = {}


def register(cls: type[Scheduler]) -> type[Scheduler]:
    """Class decorator adding a scheduler to the name registry."""
    kind = getattr(cls, "kind", None)
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"scheduler class {cls.__name__} needs a kind name, got {kind!r}")
    spec_cls = getattr(cls, "spec_cls", None)
    if not (isinstance(spec_cls, type) and issubclass(spec_cls, SchedulerSpecBase)):
        raise TypeError(f"scheduler {kind!r} needs a spec_cls subclassing SchedulerSpecBase, "
                        f"got {spec_cls!r}")  # fmt: skip
    tag = spec_cls.model_fields.get("kind")
    if tag is None or tag.default != kind:
        raise TypeError(f"scheduler {kind!r}: {spec_cls.__name__}.kind must default to {kind!r}, "
                        f"got {None if tag is None else tag.default!r}")  # fmt: skip
    if cls.kind in _REGISTRY:
        raise ValueError(f"scheduler kind {cls.kind!r} is registered twice")
    _REGISTRY[cls.kind] = cls
    return cls


def registered() -> dict[str, type[Scheduler]]:
    """Registered scheduler classes by kind."""
    return dict(_REGISTRY)


_ADAPTERS: dict[tuple[type[SchedulerSpecBase], ...], TypeAdapter[Any]] = {}


def validate_spec(data: Any) -> SchedulerSpecBase:
    """A scheduler spec validated against the kinds registered *now* (plugins included): a
    union tagged by ``kind``, so errors are located as ``<kind>.<knob>`` and an unknown kind is
    reported with the known ones. A spec instance of a registered kind is returned as is."""
    specs = tuple(cls.spec_cls for cls in _REGISTRY.values())
    if isinstance(data, specs):
        return data
    adapter = _ADAPTERS.get(specs)
    if adapter is None:
        union = Union[specs] if len(specs) > 1 else specs[0]  # type: ignore[valid-type]
        tagged = Annotated[union, Field(discriminator="kind")] if len(specs) > 1 else union
        adapter = _ADAPTERS[specs] = TypeAdapter(tagged)
    return adapter.validate_python(data)


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
