"""Placements over REST: a spec's placements run beside its schedulers and come back in the same
runs, with side-by-side figures against the spec's baseline; bad topology or placements are 422s."""

from __future__ import annotations

import pytest

from tests.api.helpers import submit, tiny_spec, wait_finished

PLACED = {
    "cluster": {"workers": 2, "batch_size": 16, "hosts": 2},
    "placements": [{"kind": "row-wise"}, {"kind": "data-parallel"}],
    "baseline": "row-wise",
}


def test_placements_come_back_beside_the_schedulers(api_sqlite) -> None:
    experiment = wait_finished(api_sqlite, submit(api_sqlite, tiny_spec(**PLACED)), timeout=120)
    assert experiment["status"] == "succeeded", experiment["error"]
    assert experiment["schedulers"] == ["naive", "herald", "row-wise", "data-parallel"]
    runs = {r["label"]: r for r in experiment["runs"]}
    assert [runs[k]["action"] for k in runs] == ["simulate", "simulate", "place", "place"]
    row_wise, herald = runs["row-wise"]["side_by_side"], runs["herald"]["side_by_side"]
    assert row_wise["baseline"] and row_wise["relative"]["bytes"] == 1.0
    assert row_wise["paradigm"] == "placement" and herald["paradigm"] == "scheduler"
    assert herald["bytes_per_iteration"]["intra_host"] == 0
    assert runs["data-parallel"]["side_by_side"]["relative"]["comm"]["tcp-100g"] > 0
    # the schedulers' own figures stay against naive
    assert runs["naive"]["relative"] == {"pull": 1.0, "push": 1.0, "overall": 1.0}
    assert runs["row-wise"]["relative"] == {"pull": None, "push": None, "overall": None}


def test_a_training_trains_the_placements_too(api_sqlite) -> None:
    """mode: train: each placement's run is trained; it keeps its side-by-side figures (counted
    on the training split) and carries its held-out metrics, equal to naive's in float64."""
    spec = tiny_spec(**PLACED, mode="train",
                     train={"model": "small", "max_iterations": 8, "dtype": "float64"})  # fmt: skip
    experiment = wait_finished(api_sqlite, submit(api_sqlite, spec), timeout=240)
    assert experiment["status"] == "succeeded", experiment["error"]
    runs = {r["label"]: r for r in experiment["runs"]}
    assert [runs[k]["action"] for k in runs] == ["train"] * 4
    for label in ("row-wise", "data-parallel"):
        assert runs[label]["side_by_side"]["paradigm"] == "placement"
        assert runs[label]["metrics"]["auc"] == pytest.approx(runs["naive"]["metrics"]["auc"],
                                                              abs=1e-9)  # fmt: skip
    assert runs["row-wise"]["side_by_side"]["relative"]["bytes"] == 1.0


def test_an_exact_plan_over_device_memory_is_422_before_anything_runs(api_sqlite) -> None:
    """Above row-wise's even share but below table-wise's largest table: the lower bound passes,
    the exact table-wise plan (made of the tables alone, no statistics needed) does not."""
    from heraldbench.platform.placements import create
    from heraldbench.platform.placements.memory import memory_use
    from heraldbench.platform.placements.runs import tables_of
    from heraldbench.platform.placing import topology_of
    from heraldbench.platform.spec import parse_spec

    spec = tiny_spec(**PLACED)
    parsed = parse_spec(spec)
    tables = tables_of(parsed.dataset.open(), parsed.embedding_dim)
    row_wise = create("row-wise").place(tables, topology_of(parsed.cluster))
    even = int(memory_use(row_wise).device.max())  # row-wise's plan fits exactly
    spec["cluster"] = {**PLACED["cluster"], "device_memory": even}
    spec["placements"] = [{"kind": "row-wise"}, {"kind": "table-wise"}]
    response = api_sqlite.post("/api/experiments", json=spec)
    assert response.status_code == 422, response.text
    (problem,) = response.json()["detail"]
    assert problem["field"] == "placements.1"
    assert "table-wise does not fit" in problem["message"]
    assert f"cluster.device_memory = {even:,} bytes" in problem["message"]
    assert api_sqlite.get("/api/experiments").json()["count"] == 0


def test_a_recshard_no_layout_of_which_fits_is_422_before_anything_runs(api_sqlite) -> None:
    """RecShard's plan reads the trace, its memory does not: with host memory taking nothing,
    each table sits whole on one of the four devices, and devices of a quarter of the tables'
    bytes pass the lower bound but hold no table larger than that; the service says so at
    once, naming the entry, instead of a run that fails once the trace is made."""
    from heraldbench.platform.placements.runs import tables_of
    from heraldbench.platform.spec import parse_spec

    spec = tiny_spec(**PLACED)
    parsed = parse_spec(spec)
    tables = tables_of(parsed.dataset.open(), parsed.embedding_dim)
    quarter = -(-sum(t.rows * t.row_bytes(t.dim) for t in tables) // 4)
    assert max(t.rows * t.row_bytes(t.dim) for t in tables) > quarter
    spec["cluster"] = {"workers": 4, "batch_size": 16, "hosts": 2, "device_memory": quarter,
                       "host_memory": 64}
    spec["placements"] = [{"kind": "recshard"}]
    spec["baseline"] = "naive"
    response = api_sqlite.post("/api/experiments", json=spec)
    assert response.status_code == 422, response.text
    (problem,) = response.json()["detail"]
    assert problem["field"] == "placements.0"
    assert "recshard does not fit: recshard finds no placement" in problem["message"]
    assert api_sqlite.get("/api/experiments").json()["count"] == 0


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"cluster": {"workers": 2, "hosts": 2, "devices_per_host": 2}}, "cluster",
     "cluster.hosts × cluster.devices_per_host = 2 × 2 = 4, but cluster.workers is 2"),
    ({"placements": [{"kind": "diagonal"}]}, "placements.0", "unknown placement 'diagonal'"),
    ({"placements": [{"kind": "column-wise", "width": 8}]}, "placements.0", "no knob 'width'"),
    ({"baseline": "table-wise"}, "baseline", "neither a listed scheduler"),
    ({"cluster": {"workers": 2, "batch_size": 16, "device_memory": "12MiB"},
      "placements": [{"kind": "row-wise"}, {"kind": "data-parallel"}]}, "placements.1",
     "data-parallel needs at least"),
])
def test_bad_topology_or_placements_are_422_naming_the_field(api_sqlite, change, field,
                                                            words) -> None:
    for path in ("/api/experiments", "/api/specs/validate"):
        response = api_sqlite.post(path, json=tiny_spec(**change))
        assert response.status_code == 422, response.text
        problems = response.json()["detail"]
        assert any(p["field"] == field and words in p["message"] for p in problems), problems
    assert api_sqlite.get("/api/experiments").json()["count"] == 0  # nothing stored
