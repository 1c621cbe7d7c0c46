"""The experiment spec: one typed, validated model for the CLI, the API, pipelines and MLflow.

>>> spec = ExperimentSpec.model_validate({
...     "name": "demo", "dataset": {"kind": "synthetic-criteo", "samples": 10000, "scale": 0.01},
...     "cluster": {"workers": 4, "batch_size": 64}, "cache": {"ratio": 0.1},
...     "schedulers": [{"kind": "naive"}, {"kind": "herald"}]})
>>> spec.cache.resolve_rows(total_rows=1000, embedding_dim=128)
100
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema

from heraldbench.platform.cluster_spec import ClusterSpec
from heraldbench.platform.data.avazu import AvazuCSVSpec
from heraldbench.platform.data.criteo import CriteoTSVSpec
from heraldbench.platform.data.movielens import MovieLensSpec
from heraldbench.platform.data.prepared import PreparedSpec
from heraldbench.platform.data.synthetic import SyntheticCriteoSpec
from heraldbench.platform.data.workload.trace import SyntheticProfileSpec
from heraldbench.platform.documents import check_document, read_document
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.model_fields import coerced_booleans
from heraldbench.platform.paths import NamesFile
from heraldbench.platform.placement_spec import PlacementSpec
from heraldbench.platform.schedulers import (
    BASELINE,
    NaiveSpec,
    SchedulerSpecBase,
    registered,
    validate_spec,
)
from heraldbench.platform.tuning import TuningSpec
from heraldbench.platform.tuning_checks import check_tuning
from heraldbench.platform.units import (
    BYTES_PER_VALUE,
    MAX_BYTES,
    parse_bytes,
    parse_duration,
    parse_rate,
)

__all__ = [
    "CacheSpec",
    "ClusterSpec",
    "DatasetSpec",
    "ExperimentSpec",
    "SchedulerSpec",
    "DistributedSpec",
    "TrainSpec",
    "format_validation_error",
    "load_spec",
    "parse_spec",
    "scheduler_specs",
    "spec_with",
]

DatasetSpec = Annotated[
    Union[
        SyntheticProfileSpec, SyntheticCriteoSpec, CriteoTSVSpec, AvazuCSVSpec, MovieLensSpec,
        PreparedSpec,
    ],
    Field(discriminator="kind"),
]


class _ByRegistry:
    """Validates a scheduler entry against the registry when a spec is validated, not when this
    module is imported, so that kinds registered later (plugins) validate too."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            validate_spec,
            serialization=core_schema.plain_serializer_function_ser_schema(
                _dump_scheduler, info_arg=True
            ),
        )

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        return {
            "type": "object",
            "description": "a registered scheduler kind and its knobs",
            "required": ["kind"],
            "properties": {"kind": {"enum": sorted(registered())}},
        }


def _dump_scheduler(spec: SchedulerSpecBase, info: Any) -> dict[str, Any]:
    return spec.model_dump(
        mode=info.mode, by_alias=bool(info.by_alias), exclude_unset=info.exclude_unset,
        exclude_defaults=info.exclude_defaults, exclude_none=info.exclude_none,
    )  # fmt: skip


#: One scheduler entry of a spec: any registered kind (a union tagged by ``kind``).
SchedulerSpec = Annotated[SchedulerSpecBase, _ByRegistry()]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CacheSpec(_Strict):
    """Per-worker cache capacity: exactly one of a row count, a byte budget or a ratio of rows."""

    rows: int | None = Field(None, ge=1, le=MAX_BYTES)
    bytes: int | str | None = Field(
        None, description="e.g. '1.6GiB', at the embedding dim; at most 4 EiB (2**62 bytes)"
    )
    ratio: float | None = Field(None, gt=0, le=1, description="share of all embedding rows")
    policy: Literal["lru", "lfu"] = "lru"

    @field_validator("bytes")
    @classmethod
    def _parse_bytes(cls, value: int | str | None) -> int | None:
        return None if value is None else parse_bytes(value)

    @model_validator(mode="after")
    def _exactly_one_size(self) -> CacheSpec:
        given = [n for n in ("rows", "bytes", "ratio") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of rows, bytes or ratio, got {given or 'none'}"
            )
        return self

    def resolve_rows(self, total_rows: int, embedding_dim: int) -> int:
        """Capacity in rows for a row space of ``total_rows`` at ``embedding_dim``."""
        if self.rows is not None:
            return self.rows
        if self.bytes is not None:
            return max(1, int(self.bytes) // (embedding_dim * BYTES_PER_VALUE))
        return max(1, math.ceil(self.ratio * total_rows))  # type: ignore[operator]


class LinkSpec(_Strict):
    """One shaped link: a rate as ``tc`` writes it (``200mbit``) and an added one-way latency."""

    rate: str = Field(description="each direction, e.g. 200mbit, 1gbit")
    latency: str = Field("0ms", description="one-way delay it adds, e.g. 0.5ms (needs netem)")

    @field_validator("rate")
    @classmethod
    def _check_rate(cls, value: str) -> str:
        parse_rate(value)
        return value

    @field_validator("latency")
    @classmethod
    def _check_latency(cls, value: str) -> str:
        parse_duration(value)
        return value

    @property
    def rate_bit_s(self) -> float:
        return parse_rate(self.rate)

    @property
    def latency_s(self) -> float:
        return parse_duration(self.latency)


class LinksSpec(LinkSpec):
    """Ranks on shaped links (:mod:`heraldbench.platform.distributed.links`; local launches as
    root): ``rate``/``latency`` shape every rank's link, or, with ``ranks_per_host`` > 1, the
    link between hosts, and ``inside`` the links inside a host."""

    ranks_per_host: int = Field(1, ge=1, le=64, description="ranks grouped as one host")
    inside: LinkSpec | None = Field(None, description="links inside a host (ranks_per_host > 1)")

    @model_validator(mode="after")
    def _inside_with_hosts(self) -> LinksSpec:
        if self.ranks_per_host > 1 and self.inside is None:
            raise ValueError(f"ranks_per_host={self.ranks_per_host} needs inside: {{rate: ...}}")
        return self


class DistributedSpec(_Strict):
    """How a ``backend: distributed`` training spans processes
    (:mod:`heraldbench.platform.distributed`)."""

    ps_ranks: int = Field(
        0, ge=0, le=64,
        description="dedicated parameter-server ranks; 0 = the PS is sharded across the workers",
    )  # fmt: skip
    timeout_s: float = Field(
        300.0, gt=0, le=86_400,
        description="a collective or a silent rank that takes longer fails the run (seconds)",
    )  # fmt: skip
    schedule: Literal["auto", "ahead", "inline"] = Field(
        "auto",
        description="when each rank replays the scheduler: ahead (the whole decision stream "
        "before training, as a deployment runs its scheduler ahead; memory grows with the run), "
        "inline (during training, bounded memory; where ranks outnumber cores the replay takes "
        "CPU from training) or auto (ahead when the stream fits in 1 GiB per rank)",
    )
    links: LinksSpec | None = Field(
        None, description="run the local ranks on shaped links (root): each rank in a network "
        "namespace, veth pairs shaped with tc; None = loopback",
    )  # fmt: skip


class TrainSpec(_Strict):
    """How ``heraldbench train`` trains the DLRM under each scheduler (heraldbench.platform.train).

    The embedding width is the experiment's ``embedding_dim`` (the DLRM reference uses 16).
    """

    model: Literal["reference", "small"] = Field(
        "reference", description="DLRM preset: reference (13-512-256-64-D, 512-256-1) or small"
    )
    lr_embedding: float = Field(0.1, gt=0, le=1000, description="SGD learning rate, embeddings")
    lr_dense: float = Field(0.1, gt=0, le=1000, description="SGD learning rate, MLPs")
    eval_fraction: float = Field(
        0.1, gt=0, lt=1, description="share of the trace, at its end, held out for evaluation"
    )
    eval_interval: int = Field(
        0, ge=0, description="iterations between held-out evaluations; 0 = at the end only"
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="where caches and model live; auto = cuda when available"
    )
    max_iterations: int | None = Field(
        None, ge=1, description="train on at most this many global batches"
    )
    torch_seed: int = Field(0, ge=0, description="seed of the initial model and table")
    dtype: Literal["float32", "float64"] = Field(
        "float32", description="precision of the model and the rows; float64 to compare executors"
    )
    backend: Literal["emulated", "distributed"] = Field(
        "emulated",
        description="emulated: W workers in one process; distributed: one torch.distributed "
        "process per worker (gloo on CPU, NCCL on CUDA), rows moved between processes",
    )
    distributed: DistributedSpec = DistributedSpec()


class ExperimentSpec(_Strict):
    """One experiment: a dataset, a cluster, caches and the schedulers to compare."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
    mode: Literal["simulate", "train"] = "simulate"
    dataset: DatasetSpec
    cluster: ClusterSpec = ClusterSpec()
    cache: CacheSpec = CacheSpec(ratio=0.1)
    embedding_dim: int = Field(128, ge=1, le=65536)
    schedulers: list[SchedulerSpec] = Field(min_length=1)  # type: ignore[valid-type]
    consistency: Literal["strict", "optimistic"] = Field(
        "strict", description="co-writer rule; 'optimistic' is Herald's released simulator"
    )
    seed: int = Field(0, ge=0)
    lower_bound: bool = Field(
        True, description="report each strict scheduler's gap to the lower bound of its partition"
    )
    train: TrainSpec | None = Field(None, description="training settings (heraldbench train)")
    tuning: TuningSpec | None = Field(None, description="what `heraldbench tune` searches")
    placements: list[PlacementSpec] = Field(default_factory=list, description="sharded "
        "placements beside the schedulers, on the same trace (docs/sharding.md)")  # fmt: skip
    baseline: str = Field(
        BASELINE, description="the row the side-by-side comparison (bytes per tier, modelled "
        "time) is relative to: a listed scheduler's or placement's kind or label",
    )  # fmt: skip
    time_profile: Annotated[str | None, NamesFile()] = Field(
        None, description="a measured hardware profile (YAML of `heraldbench profile-cluster`); "
        "each run's modelled time then includes it, next to the named profiles",
    )  # fmt: skip

    @field_validator("schedulers")
    @classmethod
    def _no_duplicates(cls, value: list[Any]) -> list[Any]:
        seen = set()
        for entry in value:
            key = json.dumps(entry.model_dump(), sort_keys=True)
            if key in seen:
                raise ValueError(f"scheduler {entry.model_dump()} is listed twice")
            seen.add(key)
        return value

    @field_validator("placements")
    @classmethod
    def _no_duplicate_placements(cls, value: list[PlacementSpec]) -> list[PlacementSpec]:
        labels = [entry.label() for entry in value]
        for label in labels:
            if labels.count(label) > 1:
                raise ValueError(f"placement {label!r} is listed twice")
        return value

    @model_validator(mode="after")
    def _baseline_listed(self) -> ExperimentSpec:
        names = {BASELINE} | {n for e in (*self.schedulers, *self.placements)
                              for n in (e.kind, e.label())}
        if self.baseline not in names:
            message = f"neither a listed scheduler nor a listed placement; give one of {sorted(names)}"
            error = PydanticCustomError("baseline", "{reason}", {"reason": message})
            raise ValidationError.from_exception_data("ExperimentSpec", [InitErrorDetails(
                type=error, loc=("baseline",), input=self.baseline)])
        return self

    @model_validator(mode="after")
    def _tuning_fits(self) -> ExperimentSpec:
        if self.tuning is not None:
            check_tuning(self)  # raises a ValidationError located under tuning.*
        return self


def format_validation_error(exc: ValidationError) -> str:
    """One line per problem: ``field.path: message (got value)``."""
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(spec)"
        got = err.get("input")
        shown = "" if isinstance(got, dict) else f" (got {got!r})"
        lines.append(f"{where}: {err['msg']}{shown}")
    return "\n".join(lines)


def parse_spec(data: Any) -> ExperimentSpec:
    """Validate a spec given as a mapping; raise :class:`SpecError` naming each bad field."""
    if not isinstance(data, dict):
        raise SpecError(f"a spec must be a mapping of fields, got {type(data).__name__}")
    check_document(data)
    for path, problem in coerced_booleans(data, ExperimentSpec):
        raise SpecError(f"{path}: {problem}")
    try:
        return ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError("invalid experiment spec:\n" + format_validation_error(exc)) from exc


#: Top-level fields whose rules reach other fields (ExperimentSpec's model validators): a spec
#: changing them is validated whole.
_WHOLE_SPEC_FIELDS = frozenset({"schedulers", "placements", "baseline", "tuning"})


@lru_cache(maxsize=None)
def _part(field: str) -> type[BaseModel]:
    """A model of ``field`` alone, validated as it is inside an ExperimentSpec."""
    info = ExperimentSpec.model_fields[field]
    return create_model(  # type: ignore[call-overload, no-any-return]
        f"ExperimentSpec.{field}", __config__=ConfigDict(extra="forbid", frozen=True),
        **{field: (info.annotation, info)},
    )  # fmt: skip


def spec_with(base: ExperimentSpec, changes: dict[str, Any]) -> ExperimentSpec:
    """``base`` with top-level fields set from ``changes`` (as a document gives them), each
    validated as :func:`parse_spec` would validate it in the whole spec, which is the same
    unless a rule spans fields: then (a tuning section, schedulers) the whole spec is. The
    values come from a document :func:`check_document` passed.

    Raises:
        SpecError: naming each bad field, as :func:`parse_spec`.
    """
    if base.tuning is not None or _WHOLE_SPEC_FIELDS & changes.keys():
        return parse_spec({**base.model_dump(mode="json", exclude_unset=True), **changes})
    for path, problem in coerced_booleans(changes, ExperimentSpec):
        raise SpecError(f"{path}: {problem}")
    updates = {}
    for field, value in changes.items():
        if field not in ExperimentSpec.model_fields:
            return parse_spec({**base.model_dump(mode="json", exclude_unset=True), **changes})
        try:
            updates[field] = getattr(_part(field).model_validate({field: value}), field)
        except ValidationError as exc:
            raise SpecError("invalid experiment spec:\n" + format_validation_error(exc)) from exc
    return base.model_copy(update=updates)


def scheduler_specs(spec: ExperimentSpec) -> list[tuple[SchedulerSpecBase, bool]]:
    """The spec's schedulers, with naive prepended when the spec lacks the baseline (True marks
    the one added)."""
    listed = [(s, False) for s in spec.schedulers]
    if not any(s.kind == BASELINE for s in spec.schedulers):
        listed.insert(0, (NaiveSpec(), True))
    return listed


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and validate a YAML or JSON spec file, and check it can run (limits.py): the files
    it names, a batch the cache cannot hold, the memory it needs."""
    spec = parse_spec(read_document(path))
    from heraldbench.platform.limits import check_runnable

    check_runnable(spec)
    return spec
