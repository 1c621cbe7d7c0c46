"""The workload profile file: typed, validated, versioned (plain numbers only, never ids).

A profile describes a trace by the numbers of :mod:`.model`: per field, the head values'
probabilities and how new values appear; per block (fields whose values recur together), how new
tuples appear, how often the block repeats an earlier sample's tuple and from how far back, and
its frequent tuples as tuples of head *ranks*; the root sources several blocks share; the dense
features and the label model; where it came from (provenance) and how well it fits (fit).
Version 2 added ``blocks.*.given`` (head tuples drawn given another block's head tuple); version
3 added ``attributes`` (multi-hot tables whose ids are a function of a field's row,
:mod:`.attributes`).

Growth curves are cumulative counts at positions 1, 2, 4, ... 2**i; distance laws are
probabilities of the log2 bins [1, 2), [2, 4), ... of a distance in samples.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from heraldbench.platform.data.workload.attributes import AttributeProfile, check_attributes
from heraldbench.platform.documents import read_problem
from heraldbench.platform.exceptions import ProfileError

__all__ = [
    "FORMAT",
    "VERSION",
    "BlockProfile",
    "DenseFeature",
    "FieldProfile",
    "HeadGiven",
    "HeadTuples",
    "LabelModel",
    "Provenance",
    "RootProfile",
    "WorkloadProfile",
    "load_profile",
    "save_profile",
    "significant",
]

FORMAT = "heraldbench-workload-profile"
#: Version this code writes; it reads every version up to this one.
VERSION = 3
#: Distances up to 2**40 samples; growth curves up to position 2**47.
MAX_BINS = 41
MAX_KNOTS = 48
_PMF_TOLERANCE = 1e-3

#: Significant digits a fitted probability keeps in a profile.
DIGITS = 6


def significant(value: float) -> float:
    """``value`` to :data:`DIGITS` significant digits. Relative, not absolute, precision: a
    distance law continued far beyond its fitted length holds nearly all its mass there, and
    the bins within that length (the ones a trace of that length draws from) may each hold less
    than a millionth; six decimals rounded them to nothing, and a generated trace of that length
    then had no repeats of those blocks at all (Avazu's round trip, docs/workloads.md)."""
    return float(f"{float(value):.{DIGITS}g}")


Probability = Annotated[float, Field(ge=0.0, le=1.0)]
Count = Annotated[float, Field(ge=0.0)]


def _check_pmf(values: list[float]) -> list[float]:
    if not values:
        raise ValueError("needs at least one bin")
    if any(v < 0 for v in values):
        raise ValueError(f"probabilities must be >= 0, got {min(values)}")
    total = sum(values)
    if abs(total - 1.0) > _PMF_TOLERANCE:
        raise ValueError(f"probabilities must sum to 1, got {total:.6g}")
    return values  # the kernels normalise; a file's numbers are kept as written


def _check_curve(values: list[float]) -> list[float]:
    if not values:
        raise ValueError("needs at least one knot")
    for i in range(1, len(values)):
        if values[i] < values[i - 1]:
            raise ValueError(f"a growth curve never decreases, but knot {i} < knot {i - 1}")
    return values


Pmf = Annotated[list[float], Field(max_length=MAX_BINS), AfterValidator(_check_pmf)]
Curve = Annotated[list[Count], Field(max_length=MAX_KNOTS), AfterValidator(_check_curve)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Provenance(_Strict):
    """Where the numbers come from (the data itself is never part of a profile)."""

    source: str = Field(description="what was read, e.g. 'Criteo Kaggle train.txt, first lines'")
    source_kind: str = Field(description="the reader kind: criteo-tsv, avazu-csv, ...")
    samples_read: int = Field(ge=1)
    fitted_at: str = Field(description="ISO date and time of the fit")
    heraldbench_version: str
    command: str = ""
    notes: str = ""


class FieldProfile(_Strict):
    """One categorical field (an embedding table).

    Attributes:
        head: probability of each head value (rank 0, 1, ...) when a new tuple reuses a head
            value; its length is the number of head values.
        new_values: cumulative new values after 2**i new tuples of the field's block.
        old_head_share: a new tuple's value that is not new is a head value with this
            probability, else an earlier cold value copied from ``old_value_distance`` back.
    """

    name: str = Field(min_length=1, max_length=64)
    head: list[Probability]
    new_values: Curve
    old_head_share: Probability
    old_value_distance: Pmf

    @field_validator("head")
    @classmethod
    def _head_sums_to_one(cls, value: list[float]) -> list[float]:
        return _check_pmf(value) if value else value


class HeadTuples(_Strict):
    """A block's frequent tuples: head ranks of its fields (in the block's field order)."""

    ranks: list[list[Annotated[int, Field(ge=0)]]] = []
    probability: list[Probability] = []

    @model_validator(mode="after")
    def _aligned(self) -> HeadTuples:
        if len(self.ranks) != len(self.probability):
            raise ValueError(
                f"{len(self.ranks)} tuples but {len(self.probability)} probabilities"
            )
        if self.probability:
            _check_pmf(list(self.probability))
        return self


class HeadGiven(_Strict):
    """Which head tuple a block draws given the head tuple another block (its parent) draws at
    the same sample: an ad's site and app go with the ad. Entries are (parent's head tuple,
    this block's head tuple, probability), as rows of the two blocks' ``head_tuples``; where
    the parent draws a head tuple listed here by its head coin, this block draws from that
    tuple's entries (their probabilities sum to 1), elsewhere from its own
    ``head_tuples.probability``.

    Attributes:
        block: the parent block's index in ``blocks``.
        parent_tuples, tuples, probability: the entries, ``parent_tuples`` ascending.
    """

    block: int = Field(ge=0)
    parent_tuples: list[Annotated[int, Field(ge=0)]]
    tuples: list[Annotated[int, Field(ge=0)]]
    probability: list[Annotated[float, Field(gt=0.0, le=1.0)]]

    @model_validator(mode="after")
    def _aligned(self) -> HeadGiven:
        if not len(self.parent_tuples) == len(self.tuples) == len(self.probability):
            raise ValueError(
                f"{len(self.parent_tuples)} parent tuples, {len(self.tuples)} tuples and "
                f"{len(self.probability)} probabilities: one of each per entry"
            )
        for i in range(1, len(self.parent_tuples)):
            if self.parent_tuples[i] < self.parent_tuples[i - 1]:
                raise ValueError(
                    f"parent_tuples must be in ascending order, but entry {i} is "
                    f"{self.parent_tuples[i]} after {self.parent_tuples[i - 1]}"
                )
        totals: dict[int, float] = {}
        for row, p in zip(self.parent_tuples, self.probability, strict=True):
            totals[row] = totals.get(row, 0.0) + p
        for row, total in totals.items():
            if abs(total - 1.0) > _PMF_TOLERANCE:
                raise ValueError(
                    f"the probabilities given parent tuple {row} sum to {total:.6g}, not 1"
                )
        return self


class BlockProfile(_Strict):
    """Fields whose values recur together (an ad, a user, a publisher and their attributes).

    Attributes:
        new_tuples: cumulative new tuples by sample 2**i.
        head_share: the share of samples that draw a head tuple (a fixed share, whatever the
            trace's length); the samples that bring no new tuple and draw no head tuple repeat
            an earlier sample's tuple.
        repeat_distance: how far back a repeat's own source lies (log2 bins of samples).
        follow: per root level, the probability that a repeat takes that root's source.
        given: the head tuples drawn given the parent block's (none: drawn on their own).
    """

    fields: list[str] = Field(min_length=1)
    new_tuples: Curve
    head_share: Probability
    repeat_distance: Pmf
    follow: list[Probability] = []
    head_tuples: HeadTuples = HeadTuples()
    given: HeadGiven | None = None

    @field_validator("new_tuples")
    @classmethod
    def _one_per_sample(cls, value: list[float]) -> list[float]:
        for i in range(1, len(value)):
            if value[i] - value[i - 1] > 2 ** (i - 1) + 1e-6:
                raise ValueError(
                    f"more new tuples than samples between knots {i - 1} and {i} "
                    f"({value[i] - value[i - 1]:g} > {2 ** (i - 1)})"
                )
        return value


class RootProfile(_Strict):
    """A source sample shared by several blocks at once (the same user seeing the same ad)."""

    rate: Probability
    distance: Pmf


class DenseFeature(_Strict):
    """A dense feature's quantiles (at evenly spaced levels from 0 to 1)."""

    name: str = Field(min_length=1, max_length=64)
    quantiles: Annotated[list[float], Field(min_length=2, max_length=1025), AfterValidator(_check_curve)]


class LabelModel(_Strict):
    """Labels are Bernoulli(sigmoid(bias + dense term + row effects)), bias set to the click rate.

    Attributes:
        dense_weights: logit weight of each standardised dense feature.
        field_effect_std: per field, the std of its rows' click effects on the logit.
    """

    click_rate: float = Field(gt=0.0, lt=1.0)
    dense_weights: list[Annotated[float, Field(ge=-20.0, le=20.0)]] = []
    field_effect_std: dict[str, Annotated[float, Field(ge=0.0, le=10.0)]] = {}


class WorkloadProfile(_Strict):
    """A fitted workload: see the module docstring and docs/workloads.md."""

    format: Literal["heraldbench-workload-profile"] = FORMAT
    version: int = Field(VERSION, ge=1)
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
    provenance: Provenance
    reference_samples: int = Field(ge=1, description="trace length the growth curves describe")
    fields: list[FieldProfile] = Field(min_length=1, max_length=1024)
    blocks: list[BlockProfile] = Field(min_length=1)
    roots: list[RootProfile] = []
    dense: list[DenseFeature] = []
    labels: LabelModel
    attributes: list[AttributeProfile] = Field([], exclude_if=lambda value: not value)
    assumptions: list[str] = []
    fit: dict[str, Any] = {}

    @model_validator(mode="before")
    @classmethod
    def _version_of_the_content(cls, data: Any) -> Any:  # the oldest version that reads it
        if isinstance(data, dict) and "version" not in data:
            data = {**data, "version": VERSION if data.get("attributes") else 2}
        return data

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value > VERSION:
            raise ValueError(
                f"written by a newer heraldbench (profile version {value}; this one reads up "
                f"to {VERSION})"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> WorkloadProfile:
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"field names repeat: {names}")
        placed = [name for block in self.blocks for name in block.fields]
        if sorted(placed) != sorted(names):
            raise ValueError("blocks must hold every field exactly once")
        heads = {f.name: len(f.head) for f in self.fields}
        for b, block in enumerate(self.blocks):
            _check_block(b, block, heads, len(self.roots))
        _check_given(self.blocks)
        if len(self.labels.dense_weights) not in (0, len(self.dense)):
            raise ValueError(
                f"labels.dense_weights has {len(self.labels.dense_weights)} weights for "
                f"{len(self.dense)} dense features"
            )
        unknown = set(self.labels.field_effect_std) - set(names)
        if unknown:
            raise ValueError(f"labels.field_effect_std names unknown fields {sorted(unknown)}")
        check_attributes(self.attributes, names)
        return self

    def field(self, name: str) -> FieldProfile:
        return next(f for f in self.fields if f.name == name)


def _check_block(b: int, block: BlockProfile, heads: dict[str, int], roots: int) -> None:
    where = f"blocks.{b}"
    if len(block.follow) != roots:
        raise ValueError(f"{where}.follow has {len(block.follow)} entries for {roots} roots")
    width = len(block.fields)
    for i, ranks in enumerate(block.head_tuples.ranks):
        if len(ranks) != width:
            raise ValueError(f"{where}.head_tuples.ranks.{i} has {len(ranks)} ranks for {width} fields")
        for name, rank in zip(block.fields, ranks, strict=True):
            if rank >= heads[name]:
                raise ValueError(
                    f"{where}.head_tuples.ranks.{i}: rank {rank} of {name} is not one of its "
                    f"{heads[name]} head values"
                )


def _check_given(blocks: list[BlockProfile]) -> None:
    """Each ``given`` names another block and rows of both blocks' head tuples; no cycle."""
    for b, block in enumerate(blocks):
        given = block.given
        if given is None:
            continue
        where = f"blocks.{b}.given"
        if given.block >= len(blocks) or given.block == b:
            raise ValueError(f"{where}.block: {given.block} is not another of the {len(blocks)} "
                             "blocks")  # fmt: skip
        parents, own = len(blocks[given.block].head_tuples.ranks), len(block.head_tuples.ranks)
        if given.parent_tuples and max(given.parent_tuples) >= parents:
            raise ValueError(f"{where}.parent_tuples: row {max(given.parent_tuples)} of a parent "
                             f"with {parents} head tuples")  # fmt: skip
        if given.tuples and max(given.tuples) >= own:
            raise ValueError(f"{where}.tuples: row {max(given.tuples)} of a block with {own} head "
                             "tuples")  # fmt: skip
    for b in range(len(blocks)):  # every parent index is valid now: walk up from each block
        seen, k = [b], b
        while blocks[k].given is not None:
            k = blocks[k].given.block
            if k in seen:
                cycle = " -> ".join(str(x) for x in [*seen[seen.index(k):], k])
                raise ValueError(f"blocks.{b}.given: the blocks' parents form a cycle ({cycle})")
            seen.append(k)


def load_profile(path: str | Path) -> WorkloadProfile:
    """Read and validate a profile file; :class:`ProfileError` names the file and the field."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(path, None, f"cannot be read: {read_problem(exc)}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ProfileError(path, None, f"is not valid YAML: {read_problem(exc)}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ProfileError(path, "format", f"is not a heraldbench workload profile ({FORMAT!r})")
    try:
        return WorkloadProfile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or None
        raise ProfileError(path, where, err["msg"].removeprefix("Value error, ")) from exc


def save_profile(profile: WorkloadProfile, path: str | Path) -> Path:
    """Write ``profile`` as YAML, atomically: a failure leaves no partial file behind."""
    path = Path(path)
    document = profile.model_dump(mode="json")
    if profile.attributes:  # a reader must know attributes (a profile copied with them added)
        document["version"] = max(profile.version, VERSION)
    text = yaml.safe_dump(document, sort_keys=False, width=100, default_flow_style=None)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
