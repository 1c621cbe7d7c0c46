"""Traces with many ids per table per sample: multi-hot pooled features and a sequence feature,
made from a one-hot trace as it streams (docs/workloads.md, "Multi-hot and sequence features").

Both are pure functions of the one-hot trace and the spec, so a featured trace replays exactly as
its source does. Memory: a multi-hot trace holds nothing; a sequence trace holds each user's last
``length`` items (users × length int32), bounded by the tables, not the trace.
"""

from __future__ import annotations

from collections.abc import Iterator

import numba
import numpy as np

from heraldbench.platform.data._features_spec import (
    MLPERF_MULTI_HOT_SIZES,
    FeaturesSpec,
    MultiHotSpec,
    SequenceSpec,
)
from heraldbench.platform.data._trace import ROW_ID_DTYPE, SampleChunk, TableLayout, TraceSource
from heraldbench.platform.data.attributes import split_attributes, with_attributes
from heraldbench.platform.data.ragged import full_lengths
from heraldbench.platform.exceptions import SpecError

__all__ = ["FeaturedTrace", "check_features", "multi_hot_widths", "splitmix64", "with_features"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: Lomax shape of MLPerf's "pareto" extra ids.
_PARETO_SHAPE = 0.25


def with_features(trace: TraceSource, features: FeaturesSpec | None) -> TraceSource:
    """``trace`` with ``features`` made on it; ``trace`` itself when there are none."""
    if features is None or (features.multi_hot is None and features.sequence is None):
        return trace
    base, attributes = split_attributes(trace)
    if attributes:  # attribute tables come last: the features are made under them
        return with_attributes(with_features(base, features), attributes)
    if not trace.layout.one_hot:
        raise SpecError("dataset.features: the trace already has many ids per table")
    return FeaturedTrace(trace, features)


def check_features(features: FeaturesSpec, names: tuple[str, ...],
                   attributes: tuple[str, ...] = ()) -> None:  # fmt: skip
    """Refuse ``features`` that do not fit tables named ``names``, made under the attribute
    tables ``attributes`` (a :class:`SpecError` naming the field), before any trace is read."""
    if features.multi_hot is not None:
        sizes = features.multi_hot.sizes
        named = sorted(set(sizes) & set(attributes)) if isinstance(sizes, dict) else []
        if named:
            raise SpecError(f"dataset.features.multi_hot.sizes: {named[0]!r} is an attribute "
                            "table, read as its parent's set; it is not widened")
        multi_hot_widths(features.multi_hot, names)
    sequence = features.sequence
    if sequence is not None and sequence.name in attributes:
        raise SpecError(f"dataset.features.sequence.name {sequence.name!r} is already a table "
                        "(an attribute table)")
    if sequence is not None:
        for role in ("user", "item"):
            if getattr(sequence, role) not in names:
                raise SpecError(f"dataset.features.sequence.{role}: no table named "
                                f"{getattr(sequence, role)!r}; the tables are {', '.join(names)}")
        if sequence.name in names:
            raise SpecError(f"dataset.features.sequence.name {sequence.name!r} is already a table")


def multi_hot_widths(spec: MultiHotSpec, names: tuple[str, ...]) -> tuple[int, ...]:
    """Ids per sample of each of the tables ``names`` under ``spec``."""
    sizes = spec.sizes
    if sizes == "mlperf":
        sizes = list(MLPERF_MULTI_HOT_SIZES)
        where = "'mlperf' (26 tables, Criteo's)"
    else:
        where = f"{sizes}"
    if isinstance(sizes, dict):
        unknown = sorted(set(sizes) - set(names))
        if unknown:
            raise SpecError(f"dataset.features.multi_hot.sizes: no table named {unknown[0]!r}; "
                            f"the tables are {', '.join(names)}")
        sizes = [sizes.get(name, 1) for name in names]
    if len(sizes) != len(names):
        raise SpecError(f"dataset.features.multi_hot.sizes {where} gives {len(sizes)} sizes for "
                        f"the dataset's {len(names)} tables")
    return tuple(int(k) for k in sizes)


class FeaturedTrace(TraceSource):
    """A one-hot trace with multi-hot tables and/or a sequence table made on it."""

    def __init__(self, base: TraceSource, features: FeaturesSpec) -> None:
        check_features(features, base.layout.names)
        self.base, self.features = base, features
        self.num_dense = base.num_dense
        names, sizes = list(base.layout.names), list(base.layout.sizes)
        widths, poolings = [1] * len(sizes), ["sum"] * len(sizes)
        multi_hot = features.multi_hot
        if multi_hot is not None:
            widths = list(multi_hot_widths(multi_hot, base.layout.names))
            poolings = [multi_hot.pooling if k > 1 else "sum" for k in widths]
        ragged = [multi_hot is not None and multi_hot.lengths == "uniform" and k > 1
                  for k in widths]
        self._sequence = _SequenceFeature(features.sequence, base) if features.sequence else None
        if self._sequence is not None:
            names.append(self._sequence.spec.name)
            sizes.append(self._sequence.item_rows)
            widths.append(self._sequence.spec.length)
            poolings.append("sequence")
            ragged.append(self._sequence.spec.shortest < self._sequence.spec.length)
        self.layout = TableLayout(tuple(names), tuple(sizes), tuple(widths), tuple(poolings),
                                  tuple(ragged) if any(ragged) else ())
        self._widths = np.asarray(widths[: base.layout.num_tables], np.int64)
        self.num_samples = (self._sequence.samples() if self._sequence is not None
                            else base.num_samples)

    def _blocks(self) -> Iterator[SampleChunk]:
        return self._made(self.base._blocks())

    def _id_blocks(self) -> Iterator[SampleChunk]:
        return self._made(self.base._id_blocks())

    def _made(self, blocks: Iterator[SampleChunk]) -> Iterator[SampleChunk]:
        history = self._sequence.fresh_history() if self._sequence is not None else None
        for block in blocks:
            history_ids = history_lengths = None
            if self._sequence is not None:
                block, history_ids, history_lengths = self._sequence.apply(block, history)
            ids, lengths = block.ids, None
            if self.features.multi_hot is not None:
                ids, lengths = self._widened(block.ids)
            if history_ids is not None:
                ids = np.concatenate([ids, history_ids], axis=1)
            if self.layout.is_ragged:
                if lengths is None:
                    lengths = full_lengths(self._widths, len(ids))
                if history_lengths is not None:
                    lengths = np.concatenate([lengths, history_lengths[:, None]], axis=1)
                lengths = np.ascontiguousarray(lengths, np.int32)
            yield SampleChunk(np.ascontiguousarray(ids, ROW_ID_DTYPE), block.labels, block.dense,
                              lengths)

    def _widened(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The tables' ids widened, and how many each sample reads per table when those vary."""
        spec = self.features.multi_hot
        layout = self.base.layout
        varying = spec.lengths == "uniform"
        widened, lengths = _widen(ids, self._widths, layout.offsets,
                                  np.asarray(layout.sizes, np.int64), np.uint64(spec.seed),
                                  spec.distribution == "pareto", varying)
        return widened, (lengths if varying else None)

    def describe(self) -> dict:
        return {**self.base.describe(), "samples": self.num_samples,
                "tables": self.layout.num_tables, "rows": self.layout.total_rows,
                "ids_per_sample": self.layout.ids_per_sample,
                "features": self.features.model_dump(exclude_none=True)} | (
            {"ragged_tables": [name for name, ragged in zip(self.layout.names, self.layout.ragged)
                               if ragged]} if self.layout.is_ragged else {})


class _SequenceFeature:
    """The history of each user's items, carried across blocks."""

    def __init__(self, spec: SequenceSpec, base: TraceSource) -> None:
        names = base.layout.names
        self.spec, self.base = spec, base
        self.user, self.item = names.index(spec.user), names.index(spec.item)
        self.user_rows = base.layout.sizes[self.user]
        self.item_rows = base.layout.sizes[self.item]
        self.item_offset = int(base.layout.offsets[self.item])
        self.history_offset = int(base.layout.total_rows)  # the new table's rows come last

    def samples(self) -> int:
        """Samples kept: a user's samples after their first ``min_length`` (``length`` unless
        histories are ragged)."""
        counts = np.zeros(self.user_rows, np.int64)
        offset = int(self.base.layout.offsets[self.user])
        for block in self.base._id_blocks():
            counts += np.bincount(block.ids[:, self.user] - offset, minlength=self.user_rows)
        return int(np.maximum(counts - self.spec.shortest, 0).sum())

    def fresh_history(self) -> tuple[np.ndarray, np.ndarray]:
        """Per user: the last ``length`` items (a ring, local ids) and how many were seen."""
        return (np.zeros((self.user_rows, self.spec.length), np.int32),
                np.zeros(self.user_rows, np.int64))

    def apply(self, block: SampleChunk,
              history) -> tuple[SampleChunk, np.ndarray, np.ndarray]:
        """The block's kept samples, their histories' ids and the histories' lengths."""
        ring, seen = history
        users = block.ids[:, self.user].astype(np.int64) - int(self.base.layout.offsets[self.user])
        items = block.ids[:, self.item].astype(np.int64) - self.item_offset
        keep, made, lengths = _histories(users, items, ring, seen, np.int64(self.spec.shortest))
        kept = np.flatnonzero(keep)
        return (block.take(kept), (made[kept] + self.history_offset).astype(ROW_ID_DTYPE),
                lengths[kept].astype(np.int32))


@numba.njit(cache=True, nogil=True)
def _histories(users, items, ring, seen, shortest):  # pragma: no cover - compiled
    """Each sample's user's previous items (the last ``length`` at most, oldest first; a pad
    repeats the newest), then the sample's item joins them."""
    n, length = users.shape[0], ring.shape[1]
    keep = np.zeros(n, np.bool_)
    made = np.zeros((n, length), np.int64)
    lengths = np.zeros(n, np.int64)
    for i in range(n):
        u = users[i]
        count = seen[u]
        if count >= shortest:
            keep[i] = True
            held = min(count, length)
            lengths[i] = held
            for j in range(length):
                made[i, j] = ring[u, (count - held + min(j, held - 1)) % length]
        ring[u, count % length] = items[i]
        seen[u] = count + 1
    return keep, made, lengths


@numba.njit(cache=True, nogil=True)
def _widen(ids, widths, offsets, sizes, seed, pareto, varying):  # pragma: no cover - compiled
    """Table after table, the sample's id then its ``k − 1`` extra ids, each a hash of (seed,
    table, id, position) mapped onto the table's rows. With ``varying``, an id brings
    ``1 + hash(seed, table, id) mod k`` ids, and the columns past them repeat the last."""
    n, tables = ids.shape
    out = np.empty((n, widths.sum()), np.int64)
    lengths = np.empty((n if varying else 0, tables), np.int64)  # kept only when they vary
    for i in range(n):
        column = 0
        for t in range(tables):
            out[i, column] = ids[i, t]
            local = np.uint64(ids[i, t] - offsets[t])
            key = seed ^ (np.uint64(t) << np.uint64(48)) ^ (local << np.uint64(12))
            held = widths[t]
            if varying:
                held = np.int64(1) + np.int64(splitmix64(~key) % np.uint64(widths[t]))
                lengths[i, t] = held
            for j in range(1, widths[t]):
                if j < held:
                    draw = splitmix64(key ^ np.uint64(j))
                    out[i, column + j] = offsets[t] + _extra_row(draw, sizes[t], pareto)
                else:
                    out[i, column + j] = out[i, column + j - 1]
            column += widths[t]
    return out, lengths


@numba.njit(cache=True, inline="always")
def splitmix64(x):  # pragma: no cover - compiled
    """SplitMix64's finaliser: a fixed, well-spread 64-bit hash (for kernels: every made id that
    is a function of a key, the multi-hot extra ids and the attribute sets)."""
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True, inline="always")
def _extra_row(draw, rows, pareto):  # pragma: no cover - compiled
    if not pareto:
        return np.int64(draw % np.uint64(rows))
    # Lomax(0.25) as MLPerf draws it: (1 − u)^(−1/0.25) − 1, truncated to an integer; values past
    # int32 (numpy's cast of them is undefined) are capped there before the modulo.
    u = (draw >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    value = min((1.0 - u) ** (-1.0 / _PARETO_SHAPE) - 1.0, 2147483647.0)
    return np.int64(value) % rows
