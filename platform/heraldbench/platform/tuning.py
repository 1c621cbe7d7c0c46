"""The ``tuning`` section of a spec: what ``heraldbench tune`` searches, and what for.

A study tunes one scheduler of the spec (``tuning.scheduler``, by default its only entry other
than naive): each trial takes the spec, sets the searched knobs and cache size, runs that one
scheduler (simulated, or trained with ``mode: train``) and scores it::

    tuning:
      space:
        scheduler.lookahead: {low: 1, high: 16, log: true}   # integers: an integer range
        cache.ratio: {low: 0.01, high: 0.3, log: true}       # floats: a float range
        cache.policy: {choices: [lru, lfu]}                  # or a list of choices
      objectives: [traffic, cache_memory]                    # two or more: a Pareto front
      constraints: [{metric: cache_memory, max: 256MiB}]
      trials: 24
      sampler: {kind: tpe, seed: 0}

Searchable names are ``scheduler.<knob>`` for any knob of the tuned scheduler and ``cache.rows``,
``cache.bytes``, ``cache.ratio`` (one of them) and ``cache.policy``. Range ends may be byte sizes
(``64MiB``). Both ends of a range and every choice must be valid with the entry's other knobs
as the spec sets them (checked when the spec is read).

A study may tune a **placement** instead (``placement.<knob>``, e.g. ``placement.hot_share``;
``tuning.placement`` names the ``placements`` entry by kind or label where the spec lists
several). Each trial then places and counts that entry alone on the spec's trace; there is no
cache to search and nothing is trained (a placement does not change what is learned).

The objectives (:data:`METRICS`; each has its own direction, and each applies to a scheduler
study, a placement study or both):

* ``traffic`` — relative to naive on the same trace **with the spec's own ``cache``**, one
  denominator for every trial: a scheduler's overall rows moved (pull + push + all-reduce) over
  naive's (with the cache not searched it is the usual relative overall); a placement's bytes
  per iteration, both tiers, over naive's overall bytes per iteration.
* ``time`` — a scheduler's modelled mean iteration time in milliseconds on ``profile``
  (docs/time-model.md).
* ``comm_time`` — modelled communication time per iteration in milliseconds on ``profile``
  (a placement's on both tiers; a scheduler's is its ``time``'s communication part).
* ``cache_memory`` — one worker's cache in MiB: rows × ``embedding_dim`` × 4 bytes.
* ``device_memory`` — a placement's fullest device in MiB (rows, optimizer state).
* ``load_balance`` — a placement's lookups served by the busiest device over the mean.
* ``auc``, ``logloss`` — held-out quality of the trained model (``mode: train`` only).

A constraint bounds a metric (``min``/``max`` in the metric's unit; for the memories also a
byte size such as ``256MiB``); a trial outside a bound stays in the study but is never among
the best. Pruning (``mode: train``, one objective, ``auc`` or ``logloss``) stops a trial at an
evaluation of ``train.eval_interval`` whose value is worse than the other trials' at the same
iteration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from heraldbench.platform.timemodel import DEFAULT_PROFILE, PROFILES
from heraldbench.platform.units import parse_bytes

__all__ = [
    "METRICS",
    "ConstraintSpec",
    "MetricInfo",
    "ObjectiveSpec",
    "ParamRange",
    "PruningSpec",
    "SamplerSpec",
    "TuningSpec",
    "tunes_placement",
]

MIB = 2**20
#: Trials a study adds at once, and what counts trials (start-up, population) within it.
MAX_TRIALS = 10_000
#: Values a categorical search lists.
MAX_CHOICES = 1_000
Metric = Literal["traffic", "time", "comm_time", "cache_memory", "device_memory",
                 "load_balance", "auc", "logloss"]
Scalar = bool | int | float | str | None
CACHE_NAMES = ("rows", "bytes", "ratio", "policy")
#: The groups of searchable names: a scheduler study searches the first two, a placement study
#: the last.
GROUPS = ("scheduler", "cache", "placement")
SCHEDULER, PLACEMENT = "scheduler", "placement"


@dataclass(frozen=True)
class MetricInfo:
    """A metric's direction and unit, whether only training measures it, and which studies
    (a scheduler's, a placement's) measure it."""

    direction: Literal["minimize", "maximize"]
    unit: str
    train_only: bool = False
    studies: tuple[str, ...] = (SCHEDULER,)


METRICS: dict[str, MetricInfo] = {
    "traffic": MetricInfo("minimize", "× naive", studies=(SCHEDULER, PLACEMENT)),
    "time": MetricInfo("minimize", "ms / iteration"),
    "comm_time": MetricInfo("minimize", "comm ms / iteration", studies=(SCHEDULER, PLACEMENT)),
    "cache_memory": MetricInfo("minimize", "MiB / worker"),
    "device_memory": MetricInfo("minimize", "MiB / device", studies=(PLACEMENT,)),
    "load_balance": MetricInfo("minimize", "max / mean lookups", studies=(PLACEMENT,)),
    "auc": MetricInfo("maximize", "held-out AUC", train_only=True),
    "logloss": MetricInfo("minimize", "held-out log loss", train_only=True),
}
#: The metrics modelled on a hardware profile.
TIMED = ("time", "comm_time")
#: The metrics given in MiB, whose bounds may be byte sizes.
MEMORY_METRICS = ("cache_memory", "device_memory")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_NULL = {"type": "null"}
_SET = {"not": _NULL}
#: The rules of ParamRange._one_form that JSON Schema can say (the OpenAPI document): a range
#: (``low`` and ``high``; with ``log``, no ``step`` and ``low`` > 0) or ``choices``, not both.
#: ``low < high``, an integer range's integer step and a step dividing the span are checked only.
_ONE_FORM = {
    "anyOf": [
        {
            "required": ["low", "high"],
            "properties": {"low": _SET, "high": _SET, "choices": _NULL},
            "anyOf": [
                {"properties": {"log": {"const": False}}},
                {"properties": {"step": _NULL, "low": {"exclusiveMinimum": 0}}},
            ],
        },
        {
            "required": ["choices"],
            "properties": {
                "choices": _SET, "low": _NULL, "high": _NULL, "step": _NULL,
                "log": {"const": False},
            },
        },
    ]
}  # fmt: skip


#: ConstraintSpec._a_bound's rule: ``min`` or ``max`` (``min <= max`` is checked only).
_A_BOUND = {"anyOf": [{"required": [k], "properties": {k: _SET}} for k in ("min", "max")]}


class ParamRange(_Strict):
    """A range (``low``, ``high``, optional ``step`` or ``log``) or a list of ``choices``."""

    model_config = ConfigDict(json_schema_extra=_ONE_FORM)

    low: int | float | None = None
    high: int | float | None = None
    step: int | float | None = Field(None, gt=0)
    log: bool = False
    choices: list[Scalar] | None = Field(
        None, min_length=1, max_length=MAX_CHOICES, json_schema_extra={"uniqueItems": True}
    )

    @field_validator("low", "high", mode="before")
    @classmethod
    def _byte_sizes(cls, value: Any) -> Any:
        if isinstance(value, bool):  # pydantic reports ValueError, not TypeError
            raise ValueError("a range end must be a number or a byte size (64MiB)")  # noqa: TRY004
        return parse_bytes(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_form(self) -> ParamRange:
        if self.choices is not None:
            if self.low is not None or self.high is not None or self.step or self.log:
                raise ValueError("give either choices or low/high (with step or log), not both")
            if len(set(map(repr, self.choices))) != len(self.choices):
                raise ValueError(f"choices repeat a value: {self.choices}")
            return self
        if self.low is None or self.high is None:
            raise ValueError("give low and high, or choices")
        if not self.low < self.high:
            raise ValueError(f"low must be below high, got low={self.low}, high={self.high}")
        if not math.isfinite(float(self.high) - float(self.low)):  # a sampler cannot span it
            raise ValueError(f"high - low must be finite, got low={self.low}, high={self.high}")
        if self.log and (self.step is not None or self.low <= 0):
            raise ValueError(f"a log range needs low > 0 and no step (low={self.low})")
        if self.kind == "int" and not isinstance(self.step or 1, int):
            raise ValueError(f"an integer range needs an integer step, got {self.step}")
        if self.step is not None and not _multiple(self.high - self.low, self.step):
            raise ValueError(f"high - low must be a multiple of step {self.step}")
        return self

    @property
    def kind(self) -> Literal["int", "float", "categorical"]:
        if self.choices is not None:
            return "categorical"
        return "int" if isinstance(self.low, int) and isinstance(self.high, int) else "float"

    def probes(self) -> list[tuple[tuple[str | int, ...], Any]]:
        """Values to check against the knob, with where they sit in the range: both ends and,
        for a float range, a fractional midpoint (an integer knob refuses it)."""
        if self.choices is not None:
            return [(("choices", i), value) for i, value in enumerate(self.choices)]
        probes: list[tuple[tuple[str | int, ...], Any]] = [(("low",), self.low)]
        probes.append((("high",), self.high))
        if self.kind == "float":  # located at the range itself
            probes.append(((), self.low + (self.high - self.low) * 0.37))
        return probes


def _multiple(span: float, step: float) -> bool:
    ratio = span / step
    return math.isfinite(ratio) and abs(ratio - round(ratio)) < 1e-9


class _MetricRef(_Strict):
    metric: Metric
    profile: str = Field(DEFAULT_PROFILE, description="hardware profile of the time metric")

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        if value not in PROFILES:
            raise ValueError(f"unknown hardware profile {value!r}; known: {', '.join(PROFILES)}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"metric": value} if isinstance(value, str) else value


class ObjectiveSpec(_MetricRef):
    """One objective; its direction is the metric's (:data:`METRICS`)."""

    @property
    def direction(self) -> str:
        return METRICS[self.metric].direction


class ConstraintSpec(_MetricRef):
    """A bound on a metric, in its unit: ``min`` and/or ``max`` (the memories: MiB, or a byte
    size such as ``256MiB``)."""

    model_config = ConfigDict(json_schema_extra=_A_BOUND)

    min: float | None = None
    max: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _memory_in_mib(cls, value: Any) -> Any:
        if not isinstance(value, dict) or value.get("metric") not in MEMORY_METRICS:
            return value
        sizes = [k for k in ("min", "max") if isinstance(value.get(k), str)]
        return {**value, **{k: parse_bytes(value[k]) / MIB for k in sizes}}

    @model_validator(mode="after")
    def _a_bound(self) -> ConstraintSpec:
        if self.min is None and self.max is None:
            raise ValueError(f"constraint on {self.metric} needs min or max")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self

    def violation(self, value: float) -> float:
        """Optuna's convention: <= 0 when the bound holds, else how far it is missed."""
        over = value - self.max if self.max is not None else float("-inf")
        under = self.min - value if self.min is not None else float("-inf")
        return max(over, under)


class SamplerSpec(_Strict):
    """Optuna's sampler, always seeded (trial task i of a run uses ``seed`` + trials before + i)."""

    kind: Literal["tpe", "random", "nsga2"] = "tpe"
    seed: int = Field(0, ge=0, le=2**63 - 1)
    startup_trials: int = Field(
        10, ge=0, le=MAX_TRIALS, description="tpe: random trials before the model"
    )
    population: int = Field(
        50, ge=2, le=MAX_TRIALS, description="nsga2: population per generation"
    )


class PruningSpec(_Strict):
    """Stop unpromising trained trials at an evaluation (``train.eval_interval``)."""

    kind: Literal["none", "median", "percentile"] = "none"
    percentile: float = Field(25.0, gt=0, lt=100, description="percentile: keep the best p%")
    startup_trials: int = Field(
        2, ge=0, le=MAX_TRIALS, description="trials that finish before any is pruned"
    )
    warmup_evaluations: int = Field(
        1, ge=1, le=1_000_000, description="evaluations before a trial may stop"
    )


class TuningSpec(_Strict):
    """What a study searches (``space``), for what (``objectives``, ``constraints``), how long."""

    scheduler: str | None = Field(None, description="kind of the schedulers entry to tune")
    placement: str | None = Field(
        None, description="kind or label of the placements entry to tune (placement.<knob>)"
    )
    space: dict[str, ParamRange] = Field(min_length=1, max_length=64)
    objectives: list[ObjectiveSpec] = Field(
        min_length=1, max_length=4, json_schema_extra={"uniqueItems": True}
    )
    constraints: list[ConstraintSpec] = []
    trials: int = Field(
        20, ge=1, le=MAX_TRIALS, description="trials to add per run of the study"
    )
    parallel: int | None = Field(None, ge=1, le=1024, description="trials at once (all workers)")
    sampler: SamplerSpec = SamplerSpec()
    pruning: PruningSpec = PruningSpec()
    study: str | None = Field(
        None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$", description="default: the spec name"
    )

    @field_validator("space")
    @classmethod
    def _searchable(cls, value: dict[str, ParamRange]) -> dict[str, ParamRange]:
        for name in value:
            group, _, field = name.partition(".")
            if group not in GROUPS or not field:
                raise ValueError(
                    f"{name!r}: search scheduler.<knob>, cache.<field> or placement.<knob>"
                )
            if group == "cache" and field not in CACHE_NAMES:
                raise ValueError(f"{name!r}: the cache fields are {', '.join(CACHE_NAMES)}")
        sizes = [n for n in value if n in ("cache.rows", "cache.bytes", "cache.ratio")]
        if len(sizes) > 1:
            raise ValueError(f"search one cache size, got {sizes}")
        return value

    @field_validator("objectives")
    @classmethod
    def _distinct(cls, value: list[ObjectiveSpec]) -> list[ObjectiveSpec]:
        keys = [(o.metric, o.profile if o.metric in TIMED else "") for o in value]
        if len(set(keys)) != len(keys):
            raise ValueError(f"an objective is listed twice: {[o.metric for o in value]}")
        return value

    @property
    def directions(self) -> list[str]:
        return [o.direction for o in self.objectives]


def tunes_placement(tuning: TuningSpec) -> bool:
    """Whether a study tunes a placement (names one, or searches a ``placement.`` knob)."""
    return tuning.placement is not None or any(n.startswith(PLACEMENT + ".") for n in tuning.space)
