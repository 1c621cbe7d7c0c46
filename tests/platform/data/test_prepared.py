"""The prepared-dataset reader: manifest checks, global ids, streaming, sample budget."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from heraldbench.platform.data.prepared import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    PreparedSpec,
    dense_column,
    table_column,
)
from heraldbench.platform.exceptions import DataError
from heraldbench.platform.spec import parse_spec


def write_dataset(folder: Path, shards: list[np.ndarray], version: int = FORMAT_VERSION) -> Path:
    """Two tables (3 and 2 rows), one dense feature; shards of (n, 2) local ids."""
    (folder / "shards").mkdir(parents=True)
    entries = []
    for i, local in enumerate(shards):
        n = len(local)
        table = pa.table({
            "label": pa.array(np.arange(n) % 2, pa.float32()),
            dense_column("I1"): pa.array(np.full(n, float(i)), pa.float32()),
            table_column("a"): pa.array(local[:, 0], pa.int32()),
            table_column("b"): pa.array(local[:, 1], pa.int32()),
        })  # fmt: skip
        pq.write_table(table, folder / "shards" / f"part-{i}.parquet")
        entries.append({"file": f"shards/part-{i}.parquet", "rows": n})
    manifest = {
        "format": FORMAT, "version": version, "samples": sum(len(s) for s in shards),
        "tables": [{"name": "a", "rows": 3}, {"name": "b", "rows": 2}], "dense": ["I1"],
        "shards": entries, "popularity": "popularity.npy", "info": {"kind": "criteo-tsv"},
    }  # fmt: skip
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return folder


def test_shards_stream_in_order_with_global_ids(tmp_path) -> None:
    folder = write_dataset(tmp_path / "d", [np.array([[0, 1], [2, 0]]), np.array([[1, 1]])])
    trace = PreparedSpec(path=folder).open()
    assert trace.layout.names == ("a", "b") and trace.num_samples == 3 and trace.num_dense == 1
    whole = trace.materialize()
    np.testing.assert_array_equal(whole.ids, [[0, 4], [2, 3], [1, 4]])  # table b starts at row 3
    np.testing.assert_array_equal(whole.dense[:, 0], [0, 0, 1])
    assert trace.describe()["source_kind"] == "criteo-tsv"


def test_max_samples_stops_inside_a_shard(tmp_path) -> None:
    folder = write_dataset(tmp_path / "d", [np.array([[0, 1], [2, 0]]), np.array([[1, 1]])])
    trace = PreparedSpec(path=folder, max_samples=1).open()
    assert trace.num_samples == 1 and len(trace.materialize().ids) == 1


def test_the_spec_accepts_the_prepared_kind(tmp_path) -> None:
    spec = parse_spec({"name": "p", "dataset": {"kind": "prepared", "path": str(tmp_path)},
                       "schedulers": [{"kind": "naive"}]})  # fmt: skip
    assert isinstance(spec.dataset, PreparedSpec)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("no manifest", "is not a prepared dataset"),
        ("old version", "preprocess again"),
        ("lost shard", "lacks shard part-1.parquet"),
    ],
)
def test_a_damaged_dataset_is_reported(tmp_path, damage, message) -> None:
    version = FORMAT_VERSION + 1 if damage == "old version" else FORMAT_VERSION
    folder = write_dataset(tmp_path / "d", [np.array([[0, 1]]), np.array([[1, 1]])], version)
    if damage == "no manifest":
        (folder / MANIFEST).unlink()
    if damage == "lost shard":
        (folder / "shards" / "part-1.parquet").unlink()
    with pytest.raises(DataError, match=message):
        PreparedSpec(path=folder).open().materialize()
