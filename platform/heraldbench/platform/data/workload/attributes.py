"""Attribute tables in a workload profile: how they are fitted and generated.

A profile's attribute (a movie's genres) is two fitted laws: how many ids a sample reads from
it (``lengths``: the share of samples reading 1, 2, ... ids), and how the reads spread over its
rows (``weights``). A generated parent row ``p`` gets a set that is a pure function of (seed,
attribute, p): its size is ``lengths``' quantile at the p-th point of the golden-ratio sequence
(shifted by the seed), its members drawn without repeats by the weights (Efraimidis and
Spirakis's weighted sampling: the rows with the smallest ``Exp(1) / weight``, from a hash).
Sizes spread evenly over any run of rows, so the few hottest rows of a profile (its first
ones), which hold many of the samples, read the fitted law as a whole does; drawn at random,
their sizes moved the mean of a MovieLens profile's genres a sample reads by up to 6% from
seed to seed.

Modelling assumptions: a parent row's set size and members are independent of how often the
row is read, and of each other beyond having no repeats. The fit is over samples, not over
distinct parent rows, so a hot item's set counts as often as it is read: under the first
assumption both give the same law, and over samples is what a cache sees. Sampling without
repeats takes the heaviest rows less often than their weights say when sets are large, so the
weights are refined until generated sets give the fitted shares.
"""

from __future__ import annotations

import math
import threading
from typing import Annotated

import numba
import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from heraldbench.platform.data.attributes import AttributeSource
from heraldbench.platform.data.features import splitmix64
from heraldbench.platform.data.ragged import length_law, read_stream

__all__ = ["AttributeProfile", "GeneratedAttribute", "check_attributes", "fit_attribute"]

#: Rows of a profile's attribute table at most: drawing a set weighs every row, so a parent row's
#: set costs O(rows) once (genres, categories: tens of rows).
MAX_ATTRIBUTE_ROWS = 256
#: Ids a set holds at most: every parent row read keeps its set, width × 4 bytes.
MAX_SET = 64
#: Parent rows drawn to check the generated shares while the weights are refined.
_REFINE_DRAWS = 1 << 15
_REFINE_ROUNDS = 8
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: The golden ratio's fractional part: the most evenly spread sequence k·φ mod 1.
_PHI = 0.6180339887498949


def _check_law(values: list[float]) -> list[float]:
    total = sum(values)
    if abs(total - 1.0) > 1e-3:
        raise ValueError(f"probabilities must sum to 1, got {total:.6g}")
    return values


_Share = Annotated[float, Field(ge=0.0, le=1.0)]
Law = Annotated[list[_Share], Field(min_length=1, max_length=MAX_SET),
                AfterValidator(_check_law)]
Weights = Annotated[list[_Share], Field(min_length=1, max_length=MAX_ATTRIBUTE_ROWS),
                    AfterValidator(_check_law)]


class AttributeProfile(BaseModel):
    """One attribute table of a profile (see the module docstring).

    Attributes:
        name: the table's name.
        parent: the field whose row decides the set.
        lengths: share of samples reading 1, 2, ... ids of the table.
        weights: one per row of the table; a row of weight 0 is never read.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64)
    parent: str = Field(min_length=1, max_length=64)
    lengths: Law
    weights: Weights

    @model_validator(mode="after")
    def _sets_fit_the_rows(self) -> AttributeProfile:
        readable = sum(1 for w in self.weights if w > 0)
        if len(self.lengths) > readable:
            raise ValueError(f"a set of {len(self.lengths)} ids cannot be drawn without repeats "
                             f"from {readable} rows of nonzero weight")
        return self


def check_attributes(attributes: list[AttributeProfile], fields: list[str]) -> None:
    """A profile's attributes: each one's parent is a field, and every table name is used once
    (a ValueError naming the entry)."""
    taken = set(fields)
    for a, attribute in enumerate(attributes):
        if attribute.parent not in fields:
            raise ValueError(f"attributes.{a}.parent: no field named {attribute.parent!r}")
        if attribute.name in taken:
            raise ValueError(f"attributes.{a}.name: {attribute.name!r} is already a table")
        taken.add(attribute.name)


class GeneratedAttribute(AttributeSource):
    """The sets of a profile's attribute, generated (see the module docstring)."""

    def __init__(self, profile: AttributeProfile, seed: int) -> None:
        self.profile = profile
        self.name, self.parent = profile.name, profile.parent
        self.rows, self.width = len(profile.weights), len(profile.lengths)
        self.ragged = self.width > 1 and profile.lengths[-1] < 1.0
        law = np.asarray(profile.lengths, np.float64)
        self._cumulative = np.cumsum(law / law.sum())
        self._log_weights = _log_weights(np.asarray(profile.weights, np.float64))
        self._key = np.uint64(seed) ^ _name_key(profile.name)
        # every parent row's set up to the largest read so far, drawn once: (ids, lengths),
        # replaced whole, so that threads reading the trace at once see one consistent pair
        self._sets = (np.zeros((0, self.width), np.int32), np.zeros(0, np.int32))
        self._growing = threading.Lock()

    def table(self, parent_rows: int) -> tuple[np.ndarray, np.ndarray]:
        sets = self._sets
        if parent_rows > len(sets[1]):
            with self._growing:
                sets = self._sets
                if parent_rows > len(sets[1]):
                    sets = self._sets = self._grown(sets, parent_rows)
        return sets

    def _grown(self, sets: tuple[np.ndarray, np.ndarray],
               rows: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """``sets`` with the parent rows up to ``rows`` drawn (a quarter more than asked, so a
        growing table is drawn in few steps). Memory: the parent rows read × width × 4 bytes."""
        held = len(sets[1])
        upto = max(rows, held + held // 4)
        ids, lengths = _draw_sets(np.arange(held, upto, dtype=np.int64), self._key,
                                  self._cumulative, self._log_weights, self.width)
        return np.concatenate([sets[0], ids]), np.concatenate([sets[1], lengths])


def fit_attribute(source: AttributeSource, parent_rows: np.ndarray,
                  seed: int = 0) -> AttributeProfile:  # fmt: skip
    """The laws of ``source``'s sets as the samples reading ``parent_rows`` (parent-local) read
    them, with weights refined so that generated sets spread over the rows as the real ones."""
    ids, lengths = source.sets(np.asarray(parent_rows, np.int64))
    law = length_law(lengths, source.width)[1:]
    read = read_stream(ids, lengths[:, None], (source.width,))
    shares = np.bincount(read, minlength=source.rows) / max(1, read.size)
    weights = shares.copy()
    for _ in range(_REFINE_ROUNDS):
        trial = AttributeProfile(name=source.name, parent=source.parent,
                                 lengths=_rounded(law, trim=True), weights=_rounded(weights))
        made = _generated_shares(trial, seed)
        weights = np.where(made > 0, weights * shares / np.where(made > 0, made, 1.0), weights)
        weights /= weights.sum()
    return AttributeProfile(name=source.name, parent=source.parent,
                            lengths=_rounded(law, trim=True), weights=_rounded(weights))


def _generated_shares(profile: AttributeProfile, seed: int) -> np.ndarray:
    generated = GeneratedAttribute(profile, seed)
    ids, lengths = generated.sets(np.arange(_REFINE_DRAWS, dtype=np.int64))
    read = read_stream(ids, lengths[:, None], (generated.width,))
    return np.bincount(read, minlength=generated.rows) / max(1, read.size)


def _rounded(law: np.ndarray, trim: bool = False) -> list[float]:
    """``law`` normalised to six significant digits; with ``trim``, its zeros at the end cut."""
    law = np.asarray(law, np.float64) / np.sum(law)
    return [float(f"{p:.6g}") for p in (np.trim_zeros(law, "b") if trim else law)]


def _log_weights(weights: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(weights > 0, np.log(weights / weights.sum()), -math.inf)


def _name_key(name: str) -> np.uint64:
    """A fixed 64-bit key of the attribute's name (FNV-1a), so two attributes differ."""
    key = 0xCBF29CE484222325
    for byte in name.encode():
        key = ((key ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return np.uint64(key)


@numba.njit(cache=True, nogil=True)
def _draw_sets(parents, key, cumulative, log_weights, width):  # pragma: no cover - compiled
    """Each parent row's set: its size from ``cumulative`` at the row's point of the golden-ratio
    sequence, its rows the ``size`` smallest of ``Exp(1) / weight`` (one exponential per row, a
    hash of key, parent and row), ascending."""
    n, rows = parents.shape[0], log_weights.shape[0]
    out = np.empty((n, width), np.int32)
    lengths = np.empty(n, np.int32)
    score = np.empty(rows, np.float64)
    start = _unit(splitmix64(key))
    for i in range(n):
        p = np.uint64(parents[i])
        base = key ^ (p * _GOLDEN)
        # sizes follow the golden-ratio sequence over the rows (shifted by the seed): every run
        # of rows, the hottest ones included, has close to the fitted law
        spread = (start + parents[i] * _PHI) % 1.0
        size = min(np.int64(np.searchsorted(cumulative, spread, side="right")) + 1, width)
        for r in range(rows):
            # log(Exp(1) / w) = log(-log u) - log w: the smallest keep the order of the keys
            u = _unit(splitmix64(base ^ (np.uint64(r + 1) << np.uint64(40))))
            score[r] = math.log(-math.log(u)) - log_weights[r]
        chosen = np.sort(np.argpartition(score, size - 1)[:size])
        for j in range(width):
            out[i, j] = chosen[min(j, size - 1)]
        lengths[i] = size
    return out, lengths


@numba.njit(cache=True, inline="always")
def _unit(x):  # pragma: no cover - compiled
    """A uniform in (0, 1) from 53 bits of ``x``."""
    return ((x >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)
