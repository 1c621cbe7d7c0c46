"""Traces: ordered samples whose categorical ids are global embedding-row ids.

A *trace source* streams :class:`SampleChunk` objects in trace order, so that a consumer never needs
the whole dataset in memory. Row ids are global: ``table_offset[f] + local_id`` over one row space
of ``layout.total_rows`` rows (docs/semantics.md).
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_serializer

from heraldbench.platform.data._features_spec import FeaturesSpec
from heraldbench.platform.data.ragged import checked_lengths
from heraldbench.platform.exceptions import DataError, SpecError

__all__ = ["DatasetSpecBase", "InMemoryTrace", "SampleChunk", "TableLayout", "TraceSource"]

#: Global row ids are int32: Criteo Terabyte's 204 M capped rows fit with room to spare.
ROW_ID_DTYPE = np.int32
#: Samples read at a time when a source without random access is scanned for some positions.
_SCAN_SAMPLES = 1 << 16


#: How a table's ids of one sample are combined: pooled into one vector (a one-hot or multi-hot
#: feature) or kept one vector per id (a sequence).
POOLINGS = ("sum", "mean", "sequence")


@dataclass(frozen=True)
class TableLayout:
    """Names and row counts of the embedding tables, in field order, and how many ids each sample
    reads from each (1, one-hot, unless ``widths`` says otherwise).

    A sample's ids are a row of ``ids_per_sample`` global ids, table after table: the ``widths[t]``
    columns of table ``t`` hold its ids in the feature's order (for a sequence, oldest first).
    """

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    #: Ids each sample reads from each table; () when every table is one-hot.
    widths: tuple[int, ...] = ()
    #: Per table, one of :data:`POOLINGS`; () when every table is pooled by sum.
    poolings: tuple[str, ...] = ()
    #: Per table, whether a sample may read fewer ids than its width (a ragged table: chunks carry
    #: :attr:`SampleChunk.lengths`); () when every sample reads every table's full width.
    ragged: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        if len(self.names) != len(self.sizes):
            raise DataError(f"{len(self.names)} table names but {len(self.sizes)} sizes")
        for label, values in (("widths", self.widths), ("poolings", self.poolings),
                              ("ragged", self.ragged)):
            if values and len(values) != len(self.sizes):
                raise DataError(f"{len(values)} {label} for {len(self.sizes)} tables")
        if self.widths and min(self.widths) < 1:
            raise DataError(f"every table's width must be >= 1, got {list(self.widths)}")
        if any(p not in POOLINGS for p in self.poolings):
            raise DataError(f"poolings must be among {POOLINGS}, got {list(self.poolings)}")
        if not self.sizes or min(self.sizes) <= 0:
            raise DataError(f"every table needs at least one row, got sizes {list(self.sizes)}")
        if sum(self.sizes) >= np.iinfo(ROW_ID_DTYPE).max:
            raise DataError(f"{sum(self.sizes):,} rows exceed the int32 row-id space")

    @property
    def num_tables(self) -> int:
        return len(self.sizes)

    @property
    def total_rows(self) -> int:
        return int(sum(self.sizes))

    @property
    def offsets(self) -> np.ndarray:
        """Global id of each table's first row, shape (F,)."""
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    @property
    def one_hot(self) -> bool:
        return not self.widths or max(self.widths) == 1

    @property
    def is_ragged(self) -> bool:
        """Whether some table's samples read fewer ids than its width (:attr:`ragged`)."""
        return any(self.ragged)

    @property
    def table_widths(self) -> tuple[int, ...]:
        return self.widths or (1,) * len(self.sizes)

    @property
    def table_poolings(self) -> tuple[str, ...]:
        return self.poolings or ("sum",) * len(self.sizes)

    @property
    def ids_per_sample(self) -> int:
        """Columns of a sample's ids: the tables' widths summed (F for a one-hot trace)."""
        return int(sum(self.table_widths))

    @property
    def column_tables(self) -> np.ndarray:
        """The table of each of a sample's id columns, shape (ids_per_sample,)."""
        return np.repeat(np.arange(len(self.sizes)), self.table_widths)


@dataclass
class SampleChunk:
    """A contiguous run of samples.

    Attributes:
        ids: (n, F) int32 global row ids.
        labels: (n,) float32 in {0, 1}.
        dense: (n, D) float32 dense features (D may be 0).
        lengths: (n, T) int32, the ids each sample reads from each table, for a layout with
            ragged tables (:attr:`TableLayout.ragged`); None where every sample fills every
            table's width. A table's ids fill its first ``lengths`` columns and the columns past
            them repeat its last id (see :mod:`heraldbench.platform.data.ragged`).
    """

    ids: np.ndarray
    labels: np.ndarray
    dense: np.ndarray
    lengths: np.ndarray | None = None

    @classmethod
    def ids_alone(cls, ids: np.ndarray, num_dense: int,
                  lengths: np.ndarray | None = None) -> SampleChunk:
        """A chunk of ids whose labels and dense features were not read (an ids-only reader)."""
        return cls(ids, np.empty(0, np.float32), np.empty((0, num_dense), np.float32), lengths)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def slice(self, start: int, stop: int) -> SampleChunk:
        return SampleChunk(self.ids[start:stop], self.labels[start:stop], self.dense[start:stop],
                           None if self.lengths is None else self.lengths[start:stop])

    def take(self, at: np.ndarray) -> SampleChunk:
        """The samples at positions ``at`` of this chunk (labels and dense features only where
        the chunk has them)."""
        return SampleChunk(self.ids[at], self.labels[at] if self.labels.size else self.labels,
                           self.dense[at] if self.dense.shape[0] else self.dense,
                           None if self.lengths is None else self.lengths[at])


class TraceSource(abc.ABC):
    """An ordered, replayable stream of samples.

    Subclasses implement :meth:`_blocks`; :meth:`chunks` re-cuts those blocks to any size, so a
    consumer's chunking never changes the data it sees.
    """

    layout: TableLayout
    num_samples: int
    num_dense: int
    #: Whether :meth:`samples_at` and :meth:`ids_at` read only the samples asked for.
    random_access: bool = False
    #: Whether a sample's labels and dense features are computed from its position and ids
    #: (:meth:`whole_samples`: a profile's generator) rather than read.
    samples_from_ids: bool = False

    @abc.abstractmethod
    def _blocks(self) -> Iterator[SampleChunk]:
        """Yield the samples in trace order, in blocks of any size."""

    def _id_blocks(self) -> Iterator[SampleChunk]:
        """:meth:`_blocks` for a consumer of ids only (a simulation): labels and dense features
        may be left empty. Sources that produce ids apart override it; the rest give it all."""
        return self._blocks()

    def whole_samples(self, positions: np.ndarray, ids: np.ndarray) -> SampleChunk:
        """The samples at ``positions`` whose ids are ``ids`` (as read before), with their
        labels and dense features, for a source that computes those from positions and ids
        (:attr:`samples_from_ids`)."""
        raise NotImplementedError(f"{type(self).__name__} reads its labels and dense features")

    def id_blocks_on(self, cores: int) -> Iterator[SampleChunk] | None:
        """:meth:`_id_blocks` made on up to ``cores`` cores at once, for a reader that leaves
        them free (FAE's first pass); None (this default) where the source reads on one."""
        return None

    def describe(self) -> dict[str, Any]:
        """Facts about the dataset for reports (kind, sizes, calibration figures)."""
        return {
            "samples": self.num_samples,
            "tables": self.layout.num_tables,
            "rows": self.layout.total_rows,
            "dense_features": self.num_dense,
        }

    def chunks(self, chunk_samples: int, ids_only: bool = False) -> Iterator[SampleChunk]:
        """Yield consecutive chunks of exactly ``chunk_samples`` samples (the last may be short);
        with ``ids_only``, their labels and dense features may be empty (not computed)."""
        if chunk_samples <= 0:
            raise ValueError(f"chunk_samples must be positive, got {chunk_samples}")
        pending: list[SampleChunk] = []
        held = 0
        for block in self._id_blocks() if ids_only else self._blocks():
            pending.append(block)
            held += len(block)
            while held >= chunk_samples:
                merged = _concat(pending)
                yield merged.slice(0, chunk_samples)
                rest = merged.slice(chunk_samples, len(merged))
                pending, held = ([rest], len(rest)) if len(rest) else ([], 0)
        if held:
            yield _concat(pending)

    def samples_at(self, positions: np.ndarray) -> SampleChunk:
        """The samples at ``positions`` (any order, repeats allowed), in that order.

        This default reads the trace once; sources with random access override it.
        """
        positions = self._checked_positions(positions)
        order = np.argsort(positions, kind="stable")
        wanted = positions[order]
        parts: list[tuple[np.ndarray, SampleChunk]] = []
        start = 0
        for chunk in self.chunks(_SCAN_SAMPLES):
            lo, hi = np.searchsorted(wanted, [start, start + len(chunk)])
            if hi > lo:
                picked = wanted[lo:hi] - start
                parts.append((order[lo:hi], chunk.take(picked)))
            start += len(chunk)
        out = SampleChunk(
            np.empty((positions.size, self.layout.ids_per_sample), ROW_ID_DTYPE),
            np.empty(positions.size, np.float32),
            np.empty((positions.size, self.num_dense), np.float32),
            np.empty((positions.size, self.layout.num_tables), np.int32)
            if self.layout.is_ragged else None,
        )
        for where, part in parts:
            out.ids[where], out.labels[where], out.dense[where] = part.ids, part.labels, part.dense
            if out.lengths is not None:
                out.lengths[where] = part.lengths
        return out

    def ids_at(self, positions: np.ndarray) -> np.ndarray:
        """The ids of the samples at ``positions``, shape (n, F) (see :meth:`samples_at`)."""
        return self.samples_at(positions).ids

    def id_samples_at(self, positions: np.ndarray) -> SampleChunk:
        """The samples at ``positions`` with their ids and, for a ragged layout, their lengths;
        labels and dense features may be left empty."""
        if self.layout.is_ragged:
            return self.samples_at(positions)
        return SampleChunk.ids_alone(self.ids_at(positions), self.num_dense)

    def renumbered(self, rows: np.ndarray) -> np.ndarray:
        """The ids this trace gives ``rows``, named as the traces it reads name them: the same
        ids, unless the trace renumbers rows (:class:`FirstSeenTrace`)."""
        return np.asarray(rows)

    def _checked_positions(self, positions: np.ndarray) -> np.ndarray:
        positions = np.asarray(positions, dtype=np.int64).ravel()
        if positions.size and (positions.min() < 0 or positions.max() >= self.num_samples):
            raise DataError(
                f"sample positions {int(positions.min())}..{int(positions.max())} are outside "
                f"the trace's 0..{self.num_samples - 1}"
            )
        return positions

    def materialize(self) -> InMemoryTrace:
        """Load the whole trace into memory (for small traces and tests)."""
        return InMemoryTrace.from_chunk(_concat(list(self._blocks())), self.layout)


def _concat(chunks: list[SampleChunk]) -> SampleChunk:
    if len(chunks) == 1:
        return chunks[0]
    return SampleChunk(
        np.concatenate([c.ids for c in chunks]),
        np.concatenate([c.labels for c in chunks]),
        np.concatenate([c.dense for c in chunks]),
        None if chunks[0].lengths is None else np.concatenate([c.lengths for c in chunks]),
    )


@dataclass
class InMemoryTrace(TraceSource):
    """A trace held in arrays; ids are validated against the layout."""

    ids: np.ndarray
    labels: np.ndarray
    dense: np.ndarray
    layout: TableLayout
    info: dict[str, Any] = field(default_factory=dict)
    #: (n, T) ids per sample per table, for a ragged layout (:attr:`SampleChunk.lengths`).
    lengths: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.ids = np.ascontiguousarray(self.ids, dtype=ROW_ID_DTYPE)
        n = self.ids.shape[0]
        if self.ids.ndim != 2 or self.ids.shape[1] != self.layout.ids_per_sample:
            raise DataError(
                f"ids must have shape (n, {self.layout.ids_per_sample}), got {self.ids.shape}"
            )
        self.labels = np.ascontiguousarray(self.labels, dtype=np.float32).reshape(n)
        dense = np.ascontiguousarray(self.dense, dtype=np.float32)
        width = dense.shape[1] if dense.ndim == 2 else (dense.size // n if n else 0)
        self.dense = dense.reshape(n, width)
        self.num_samples = n
        self.num_dense = self.dense.shape[1]
        self._check_ranges()
        self.lengths = checked_lengths(self.ids, self.lengths, self.layout)

    def _check_ranges(self) -> None:
        if self.num_samples == 0:
            return
        tables = self.layout.column_tables
        offsets = self.layout.offsets[tables]
        sizes = np.asarray(self.layout.sizes)[tables]
        local = self.ids.astype(np.int64) - offsets
        bad = (local < 0) | (local >= sizes)
        if bad.any():
            row, col = map(int, np.argwhere(bad)[0])
            raise DataError(
                f"sample {row} field {col}: global id {int(self.ids[row, col])} is outside table "
                f"{self.layout.names[tables[col]]!r} "
                f"(rows {offsets[col]}..{offsets[col] + sizes[col] - 1})"
            )

    @classmethod
    def from_chunk(
        cls, chunk: SampleChunk, layout: TableLayout, info: dict[str, Any] | None = None
    ) -> InMemoryTrace:
        return cls(chunk.ids, chunk.labels, chunk.dense, layout, dict(info or {}), chunk.lengths)

    @classmethod
    def from_local_ids(
        cls,
        local_ids: np.ndarray,
        table_sizes: list[int] | tuple[int, ...],
        labels: np.ndarray | None = None,
        dense: np.ndarray | None = None,
    ) -> InMemoryTrace:
        """Build from per-table local ids of shape (n, F) (handy for tiny hand-written traces)."""
        local_ids = np.asarray(local_ids, dtype=np.int64)
        n, f = local_ids.shape
        layout = TableLayout(tuple(f"C{i + 1}" for i in range(f)), tuple(int(s) for s in table_sizes))
        ids = local_ids + layout.offsets
        labels = np.zeros(n, np.float32) if labels is None else labels
        dense = np.zeros((n, 0), np.float32) if dense is None else dense
        return cls(ids, labels, dense, layout)

    def _blocks(self) -> Iterator[SampleChunk]:
        yield SampleChunk(self.ids, self.labels, self.dense, self.lengths)

    random_access = True

    def samples_at(self, positions: np.ndarray) -> SampleChunk:
        return SampleChunk(self.ids, self.labels, self.dense, self.lengths).take(
            self._checked_positions(positions))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **self.info}


class DatasetSpecBase(BaseModel):
    """Base of every dataset spec: a ``kind`` tag, optional ``features`` (multi-hot, a sequence)
    and :meth:`open`, which returns the trace."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    features: FeaturesSpec | None = Field(
        None, description="multi-hot and sequence features made on the one-hot trace")

    @model_serializer(mode="wrap")
    def _without_absent_features(self, handler: Any) -> dict[str, Any]:
        # A one-hot spec reads, stores and logs as it did before features existed.
        data = handler(self)
        if data.get("features", 0) is None:
            del data["features"]
        return data

    def open(self) -> TraceSource:
        """The trace this spec names, with its features made on it."""
        from heraldbench.platform.data.features import with_features

        return with_features(self._open(), self.features)

    def _open(self) -> TraceSource:
        raise SpecError(f"dataset kind {getattr(self, 'kind', '?')!r} cannot be opened")
