"""Limits known at submission are refused at submission (422 naming the field), not at run time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.api.helpers import tiny_spec


def _problem(api, spec) -> dict:
    for path in ("/api/specs/validate", "/api/experiments"):
        response = api.post(path, json=spec)
        assert response.status_code == 422, (path, response.text[:500])
    assert api.get("/api/experiments").json()["count"] == 0
    return response.json()["detail"][0]


def test_a_batch_the_cache_cannot_hold_is_refused(api_sqlite) -> None:
    problem = _problem(api_sqlite, tiny_spec(cluster={"workers": 2, "batch_size": 10**9}))
    assert problem["field"] == "cluster.batch_size" and "cannot hold" in problem["message"]
    problem = _problem(api_sqlite, tiny_spec(cache={"rows": 100}))  # 16 x 26 ids > 100 rows
    assert problem["field"] == "cluster.batch_size"


@pytest.mark.parametrize("samples", [10**12, 2**70])
def test_samples_past_the_simulators_markers_are_refused(api_sqlite, samples: int) -> None:
    dataset = {"kind": "synthetic-criteo", "samples": samples, "scale": 0.001}
    problem = _problem(api_sqlite, tiny_spec(dataset=dataset, cluster={"workers": 8,
                                                                       "batch_size": 1}))
    assert problem["field"] == "dataset.samples" and "int32" in problem["message"]


@pytest.mark.parametrize("what", ["missing", "folder", "fifo"])
def test_a_dataset_path_that_is_no_file_is_refused(api_sqlite, data_dir: Path, what: str) -> None:
    path = data_dir / f"train-{what}.txt"
    if what == "folder":
        path.mkdir()
    elif what == "fifo":
        os.mkfifo(path)
    problem = _problem(api_sqlite, tiny_spec(dataset={"kind": "criteo-tsv", "path": str(path)}))
    assert problem["field"] == "dataset.path" and str(path) in problem["message"]


def test_a_prepared_folder_without_manifest_is_refused(api_sqlite, data_dir: Path) -> None:
    (data_dir / "empty").mkdir()
    spec = tiny_spec(dataset={"kind": "prepared", "path": str(data_dir / "empty")})
    assert _problem(api_sqlite, spec)["field"] == "dataset.path"


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"cluster": {"workers": True, "batch_size": 16}}, "cluster.workers"),
        ({"embedding_dim": False}, "embedding_dim"),
        ({"schedulers": [{"kind": "herald", "lookahead": True}]}, "schedulers.0.lookahead"),
    ],
)
def test_booleans_are_not_coerced_to_numbers(api_sqlite, fields, where: str) -> None:
    assert _problem(api_sqlite, tiny_spec(**fields))["field"] == where
