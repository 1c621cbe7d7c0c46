"""Attribute tables: multi-hot tables whose ids are a function of another table's id.

A movie's genres, an ad's categories, a product's tags: the sample reads its item, and with it
the item's set of attribute ids, the same set every time that item is read. The set's size
varies from item to item, so an attribute table is ragged (:mod:`.ragged`): its width is the
largest set, and a smaller set's columns past its size repeat its last id.

Where the sets come from is an :class:`AttributeSource`: read from a file beside the log
(:class:`AttributeMap`: MovieLens's movie file gives each movie's genres), or generated from a
workload profile's fitted laws (:mod:`.workload.attributes`). :class:`AttributeTrace` appends the
attribute tables to a trace as it streams, after every other table; nothing is held but the
sources themselves, bounded by the parent tables' rows.

Attribute tables come last in every composition: the multi-hot and sequence features are made on
the trace under them (:func:`with_attributes` and :func:`.features.with_features` commute), and an
attribute reads its parent table's first column, which is the sample's own id even when the
parent is widened to multi-hot.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import Any

import numba
import numpy as np

from heraldbench.platform.data._trace import ROW_ID_DTYPE, SampleChunk, TableLayout, TraceSource
from heraldbench.platform.data.ragged import with_pads
from heraldbench.platform.exceptions import DataError, SpecError

__all__ = ["AttributeMap", "AttributeSource", "AttributeTrace", "split_attributes",
           "with_attributes"]

_NO_LENGTHS = np.zeros(0, np.int32)


class AttributeSource(abc.ABC):
    """The attribute set of every row of a parent table.

    Attributes:
        name: the attribute table's name.
        parent: the name of the table whose id decides the set.
        rows: rows of the attribute table.
        width: the largest set.
        ragged: whether some set is smaller than ``width``.
    """

    name: str
    parent: str
    rows: int
    width: int
    ragged: bool

    @abc.abstractmethod
    def table(self, parent_rows: int) -> tuple[np.ndarray, np.ndarray]:
        """The sets of (at least) the first ``parent_rows`` parent rows: (P, width) int32
        attribute-local ids, each set's columns past its size repeating its last id, and the
        sizes (P,) int32."""

    def sets(self, parent_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sets of the parent-local rows ``parent_rows`` (n,): (n, width) ids, (n,) sizes."""
        rows = np.asarray(parent_rows, np.int64)
        ids, lengths = self.table(int(rows.max()) + 1 if rows.size else 0)
        return ids[rows], lengths[rows]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "parent": self.parent, "rows": self.rows, "width": self.width}


class AttributeMap(AttributeSource):
    """Sets read from a file: row ``p`` of the parent table has ``ids[p, :lengths[p]]``.

    Args:
        name, parent: as in :class:`AttributeSource`.
        rows: rows of the attribute table.
        ids: (P, width) attribute-local ids, one row per parent row.
        lengths: (P,) each set's size, 1..width.
    """

    def __init__(self, name: str, parent: str, rows: int, ids: np.ndarray, lengths: np.ndarray,
                 ragged: bool | None = None) -> None:  # fmt: skip
        self.name, self.parent, self.rows = name, parent, int(rows)
        self.ids = np.ascontiguousarray(ids, np.int32)
        self.lengths = np.ascontiguousarray(lengths, np.int32)
        self.width = int(self.ids.shape[1])
        if self.lengths.shape != (self.ids.shape[0],):
            raise DataError(f"attribute {name!r}: {self.lengths.shape[0]} sizes for "
                            f"{self.ids.shape[0]} parent rows")
        if self.lengths.size and (self.lengths.min() < 1 or self.lengths.max() > self.width):
            raise DataError(f"attribute {name!r}: every set needs 1..{self.width} ids")
        if self.ids.size and (self.ids.min() < 0 or self.ids.max() >= self.rows):
            raise DataError(f"attribute {name!r}: ids outside its {self.rows} rows")
        if (self.ids != with_pads(self.ids, self.lengths[:, None], (self.width,))).any():
            raise DataError(f"attribute {name!r}: a set's columns past its size must repeat "
                            "its last id")
        #: given by a reader that knows which rows are read (rows no sample reads do not count)
        self.ragged = bool(self.lengths.size and self.lengths.min() < self.width) \
            if ragged is None else ragged

    def table(self, parent_rows: int) -> tuple[np.ndarray, np.ndarray]:
        if parent_rows > len(self.lengths):
            raise DataError(f"attribute {self.name!r} knows the sets of {len(self.lengths)} "
                            f"rows of {self.parent!r}, not of row {parent_rows - 1}")
        return self.ids, self.lengths


class AttributeTrace(TraceSource):
    """``base`` with one attribute table per source appended after its tables."""

    def __init__(self, base: TraceSource, sources: list[AttributeSource]) -> None:
        layout = base.layout
        self.base, self.sources = base, list(sources)
        self.num_samples, self.num_dense = base.num_samples, base.num_dense
        self.random_access, self.samples_from_ids = base.random_access, base.samples_from_ids
        self._parent_columns = [_parent_column(layout, s) for s in self.sources]
        self._parent_offsets = [int(layout.offsets[layout.names.index(s.parent)])
                                for s in self.sources]
        self._first = layout.total_rows  # the attribute tables' rows come last
        ragged = list(layout.ragged or (False,) * layout.num_tables)
        self.layout = TableLayout(
            layout.names + tuple(s.name for s in self.sources),
            layout.sizes + tuple(s.rows for s in self.sources),
            layout.table_widths + tuple(s.width for s in self.sources),
            layout.table_poolings + ("sum",) * len(self.sources),
            tuple(ragged + [s.ragged for s in self.sources]) if
            any(ragged) or any(s.ragged for s in self.sources) else ())

    def _with_sets(self, chunk: SampleChunk) -> SampleChunk:
        base = self.base.layout
        n, column, tables = len(chunk), base.ids_per_sample, base.num_tables
        ids = np.empty((n, self.layout.ids_per_sample), ROW_ID_DTYPE)
        ids[:, :column] = chunk.ids
        lengths = None
        if self.layout.is_ragged:
            lengths = np.empty((n, self.layout.num_tables), np.int32)
            lengths[:, :tables] = base.table_widths if chunk.lengths is None else chunk.lengths
        offset = self._first
        for t, (source, parent, parent_offset) in enumerate(zip(
                self.sources, self._parent_columns, self._parent_offsets, strict=True)):
            rows = chunk.ids[:, parent]
            table = source.table(int(rows.max()) - parent_offset + 1 if n else 0)
            _gather_sets(rows, parent_offset, *table, offset, ids[:, column:column + source.width],
                         lengths[:, tables + t] if lengths is not None else _NO_LENGTHS)
            column += source.width
            offset += source.rows
        return SampleChunk(ids, chunk.labels, chunk.dense, lengths)

    def _blocks(self) -> Iterator[SampleChunk]:
        return map(self._with_sets, self.base._blocks())

    def _id_blocks(self) -> Iterator[SampleChunk]:
        return map(self._with_sets, self.base._id_blocks())

    def id_blocks_on(self, cores: int) -> Iterator[SampleChunk] | None:
        blocks = self.base.id_blocks_on(cores)
        return None if blocks is None else map(self._with_sets, blocks)

    def samples_at(self, positions: np.ndarray) -> SampleChunk:
        return self._with_sets(self.base.samples_at(positions))

    def id_samples_at(self, positions: np.ndarray) -> SampleChunk:
        return self._with_sets(self.base.id_samples_at(positions))

    def ids_at(self, positions: np.ndarray) -> np.ndarray:
        return self.id_samples_at(positions).ids

    def whole_samples(self, positions: np.ndarray, ids: np.ndarray) -> SampleChunk:
        # Modelling assumption: a generated sample's label and dense features depend on its
        # base ids alone, not on its attributes.
        return self._with_sets(
            self.base.whole_samples(positions, ids[:, : self.base.layout.ids_per_sample]))

    def describe(self) -> dict[str, Any]:
        layout = self.layout
        ragged = [name for name, is_ragged in zip(layout.names, layout.ragged) if is_ragged]
        return {**self.base.describe(), "tables": layout.num_tables, "rows": layout.total_rows,
                "ids_per_sample": layout.ids_per_sample,
                "attributes": [s.describe() for s in self.sources]} | (
            {"ragged_tables": ragged} if ragged else {})


def with_attributes(trace: TraceSource, sources: list[AttributeSource]) -> TraceSource:
    """``trace`` with the attribute tables of ``sources`` appended; ``trace`` when there are
    none."""
    if not sources:
        return trace
    if isinstance(trace, AttributeTrace):
        return AttributeTrace(trace.base, trace.sources + list(sources))
    return AttributeTrace(trace, sources)


def split_attributes(trace: TraceSource) -> tuple[TraceSource, list[AttributeSource]]:
    """The trace under the attribute tables, and their sources (none for a trace without)."""
    if isinstance(trace, AttributeTrace):
        return trace.base, list(trace.sources)
    return trace, []


def _parent_column(layout: TableLayout, source: AttributeSource) -> int:
    """The column of the parent's first id: the sample's own id of that table."""
    if source.parent not in layout.names:
        raise SpecError(f"attribute {source.name!r}: no parent table {source.parent!r}; the "
                        f"tables are {', '.join(layout.names)}")
    if source.name in layout.names:
        raise SpecError(f"attribute {source.name!r} is already a table's name")
    table = layout.names.index(source.parent)
    return int(sum(layout.table_widths[:table]))


@numba.njit(cache=True, nogil=True)
def _gather_sets(parents, parent_offset, table_ids, table_lengths, offset, out,
                 lengths):  # pragma: no cover - compiled
    """Each sample's set: ``out[i] = table_ids[p] + offset`` and, where lengths are kept,
    ``lengths[i] = table_lengths[p]``, for ``p`` the sample's parent-local row."""
    for i in range(parents.shape[0]):
        p = parents[i] - parent_offset
        for j in range(out.shape[1]):
            out[i, j] = table_ids[p, j] + offset
        if lengths.shape[0]:
            lengths[i] = table_lengths[p]
