"""Prepared datasets: the columnar shards ``heraldbench preprocess`` writes, read as a stream.

A prepared dataset is a folder::

    manifest.json                 tables, dense names, shards in trace order, facts, checksums
    shards/part-00000.parquet     label, dense features (float32), one int32 local id per table
    vocab/<table>.parquet         value, count, row: every raw value kept and its local row
    popularity.npy                int64 accesses of every global row (row order of the layout)

Local ids follow the raw readers (docs/semantics.md): row 0 of each table is the missing value, row 1 the
shared "rare" row when a frequency threshold above 1 was set, then one row per kept raw value in
order of first appearance. The trace adds each table's offset to make global ids, exactly as the
raw readers do, so a prepared file and its raw reader give the same trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import pyarrow.parquet as pq
from pydantic import Field

from heraldbench.platform.data._trace import (
    ROW_ID_DTYPE,
    DatasetSpecBase,
    SampleChunk,
    TableLayout,
    TraceSource,
)
from heraldbench.platform.exceptions import DataError
from heraldbench.platform.paths import NamesFile

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "LABEL_COLUMN",
    "MANIFEST",
    "POPULARITY",
    "PreparedSpec",
    "PreparedTrace",
    "dense_column",
    "table_column",
]

FORMAT = "heraldbench-prepared"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
POPULARITY = "popularity.npy"
LABEL_COLUMN = "label"


def dense_column(name: str) -> str:
    """Shard column of a dense feature."""
    return f"dense:{name}"


def table_column(name: str) -> str:
    """Shard column of a table's local ids."""
    return f"id:{name}"


class PreparedSpec(DatasetSpecBase):
    """A dataset written by ``heraldbench preprocess``, streamed shard by shard.

    Attributes:
        kind: ``"prepared"``.
        path: the folder holding ``manifest.json``.
        max_samples: read at most this many samples (the first ones); None reads all.

    Example:
        >>> trace = PreparedSpec(path="data/criteo-kaggle").open()
        >>> trace.layout.names[:2]
        ('C1', 'C2')
    """

    kind: Literal["prepared"] = "prepared"
    path: Annotated[Path, NamesFile("folder")]
    max_samples: int | None = Field(None, ge=1, le=2**63 - 1, description="null: all")

    def _open(self) -> PreparedTrace:
        """Read the manifest; shards are read lazily, one at a time, as the trace is consumed."""
        return PreparedTrace(self.path, self.max_samples)


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of a prepared dataset, checked for format and version."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise DataError(
            f"{str(folder)!r} is not a prepared dataset (no {MANIFEST}); "
            "write one with `heraldbench preprocess`"
        )
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from None
    if manifest.get("format") != FORMAT or manifest.get("version") != FORMAT_VERSION:
        raise DataError(
            f"{path}: expected {FORMAT} version {FORMAT_VERSION}, found "
            f"{manifest.get('format')!r} version {manifest.get('version')!r}; preprocess again"
        )
    return manifest


class PreparedTrace(TraceSource):
    """The trace of a prepared dataset; only one shard is held in memory at a time."""

    def __init__(self, folder: Path, max_samples: int | None = None) -> None:
        self.folder = Path(folder)
        self.manifest = read_manifest(self.folder)
        tables = self.manifest["tables"]
        self.layout = TableLayout(
            tuple(t["name"] for t in tables), tuple(int(t["rows"]) for t in tables)
        )
        self.dense_names = tuple(self.manifest["dense"])
        total = int(self.manifest["samples"])
        self.num_samples = total if max_samples is None else min(total, max_samples)
        self.num_dense = len(self.dense_names)

    def describe(self) -> dict[str, Any]:
        info = dict(self.manifest.get("info", {}))
        source = {"source_kind": info.pop("kind", None), "source_path": info.pop("path", None)}
        return {
            **super().describe(),
            **info,
            **source,
            "kind": "prepared",
            "path": str(self.folder),
            "samples": self.num_samples,
        }

    def popularity(self) -> np.ndarray:
        """Accesses of every global row over the whole prepared dataset, int64."""
        return np.load(self.folder / self.manifest["popularity"])

    def _blocks(self) -> Iterator[SampleChunk]:
        left = self.num_samples
        offsets = self.layout.offsets.astype(ROW_ID_DTYPE)
        for shard in self.manifest["shards"]:
            if left <= 0:
                return
            chunk = self._read_shard(self.folder / shard["file"], offsets)
            if len(chunk) > left:
                chunk = chunk.slice(0, left)
            left -= len(chunk)
            yield chunk

    def _read_shard(self, path: Path, offsets: np.ndarray) -> SampleChunk:
        if not path.is_file():
            raise DataError(f"prepared dataset {str(self.folder)!r} lacks shard {path.name}")
        table = pq.read_table(path)
        n = table.num_rows
        ids = np.empty((n, self.layout.num_tables), ROW_ID_DTYPE)
        for f, name in enumerate(self.layout.names):
            ids[:, f] = table.column(table_column(name)).to_numpy() + offsets[f]
        dense = np.empty((n, self.num_dense), np.float32)
        for d, name in enumerate(self.dense_names):
            dense[:, d] = table.column(dense_column(name)).to_numpy()
        labels = table.column(LABEL_COLUMN).to_numpy().astype(np.float32, copy=False)
        return SampleChunk(ids, labels, dense)
