"""Experiments over REST: submit, watch, read results, list, cancel, and the errors."""

from __future__ import annotations

import json
from pathlib import Path

from heraldbench.api import worker
from tests.api.helpers import poll, submit, tiny_spec, wait_finished


def test_submit_returns_202_with_location(api) -> None:
    response = api.post("/api/experiments", json=tiny_spec())
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued"
    assert body["location"] == f"/api/experiments/{body['id']}"
    assert response.headers["location"] == body["location"]


def test_a_submitted_experiment_runs_to_results(api) -> None:
    experiment = wait_finished(api, submit(api, tiny_spec()))
    assert experiment["status"] == "succeeded", experiment["error"]
    assert experiment["progress"] == {"done": 2, "total": 2}
    assert experiment["schedulers"] == ["naive", "herald"]
    assert experiment["spec"] == tiny_spec()
    naive, herald = experiment["runs"]
    assert naive["relative"] == {"pull": 1.0, "push": 1.0, "overall": 1.0}
    assert 0 < herald["relative"]["overall"] < 1
    assert herald["counts"]["lookups"] > 0 and herald["totals"]["pull"] > 0
    assert set(herald["series"]) == {"pull", "push"} and 0 < len(herald["series"]["pull"]) <= 500
    assert herald["time"] and herald["bytes"]["pull"] > 0
    assert herald["metrics"] is None and herald["error"] is None and herald["wall_seconds"] > 0
    assert naive["progress"] == herald["progress"] == 1.0


def test_a_running_run_reports_its_fraction_done(api_sqlite, monkeypatch) -> None:
    # Every chunk's progress is stored (the workers are threads of this process): at the
    # default of once a second, a run done within its first second (this one, on a fast day)
    # never shows a fraction between 0 and 1.
    monkeypatch.setattr(worker, "PROGRESS_SECONDS", 0.0)
    long_spec = tiny_spec(
        dataset={"kind": "synthetic-criteo", "samples": 600_000, "scale": 0.01},
        schedulers=[{"kind": "naive"}],
        lower_bound=False,
    )
    experiment_id = submit(api_sqlite, long_spec)

    def partly_done() -> list[float]:
        runs = api_sqlite.get(f"/api/experiments/{experiment_id}").json()["runs"]
        return [r["progress"] for r in runs if r["status"] == "running" and 0 < (r["progress"] or 0) < 1]

    assert poll(partly_done, timeout=120)
    experiment = wait_finished(api_sqlite, experiment_id, timeout=180)
    assert [r["progress"] for r in experiment["runs"]] == [1.0]


def test_a_grid_becomes_one_run_per_point_seed_and_scheduler(api) -> None:
    spec = tiny_spec(
        cache={"ratio": [0.05, 0.1]},
        schedulers=[{"kind": "herald", "lookahead": [1, 2]}],
        seeds=[0, 1],
    )
    experiment = wait_finished(api, submit(api, spec))
    assert experiment["status"] == "succeeded"
    assert experiment["progress"]["total"] == 2 * 2 * 3  # points x seeds x (naive + 2 herald)
    assert {r["point"]["cache.ratio"] for r in experiment["runs"]} == {0.05, 0.1}
    assert all(r["relative"]["overall"] is not None for r in experiment["runs"])


def _shardless_dataset(folder: Path) -> Path:
    """A prepared dataset whose manifest passes the submission's checks but whose shard is gone."""
    from heraldbench.platform.data.prepared import FORMAT, FORMAT_VERSION, MANIFEST

    folder.mkdir()
    tables = [{"name": f"C{i}", "rows": 1000} for i in range(1, 27)]
    manifest = {"format": FORMAT, "version": FORMAT_VERSION, "tables": tables, "dense": [],
                "samples": 2000, "shards": [{"file": "shards/part-00000.parquet"}]}  # fmt: skip
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return folder


def test_a_failed_run_shows_its_error(api, data_dir: Path) -> None:
    folder = _shardless_dataset(data_dir / "broken")
    spec = tiny_spec(dataset={"kind": "prepared", "path": str(folder)})
    experiment = wait_finished(api, submit(api, spec))
    assert experiment["status"] == "failed"
    assert experiment["error"].startswith("2 of 2 runs failed")
    run = experiment["runs"][0]
    assert run["status"] == "failed" and "DataError" in run["error"] and "part-00000" in run["error"]
    assert "Traceback" in run["traceback"]


def test_listing_pages_newest_first_and_filters_by_status(api) -> None:
    ids = [submit(api, tiny_spec(name=f"list-{i}")) for i in range(3)]
    for experiment_id in ids:
        wait_finished(api, experiment_id)
    page = api.get("/api/experiments", params={"limit": 2, "offset": 0}).json()
    assert page["count"] == 3 and [e["id"] for e in page["data"]] == ids[::-1][:2]
    assert [e["id"] for e in api.get("/api/experiments?limit=2&offset=2").json()["data"]] == ids[:1]
    assert api.get("/api/experiments?status=succeeded").json()["count"] == 3
    assert api.get("/api/experiments?status=running").json() == {"data": [], "count": 0}
    summary = page["data"][0]
    assert set(summary) == {
        "id",
        "name",
        "status",
        "created_at",
        "updated_at",
        "progress",
        "mode",
        "schedulers",
    }
    assert summary["created_at"].endswith(("Z", "+00:00"))


def test_cancel_marks_the_experiment_and_its_open_runs(api) -> None:
    # ~1 s per run, 7 runs on 2 worker threads: the cancel comes while most are queued.
    big = tiny_spec(
        dataset={"kind": "synthetic-criteo", "samples": 100_000, "scale": 0.01},
        schedulers=[{"kind": "herald", "lookahead": [1, 2, 3, 4, 5, 6]}],
    )
    experiment_id = submit(api, big)
    response = api.post(f"/api/experiments/{experiment_id}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    experiment = wait_finished(api, experiment_id)
    assert experiment["status"] == "cancelled"
    statuses = {r["status"] for r in experiment["runs"]}
    assert statuses <= {"cancelled", "succeeded", "failed"} and "cancelled" in statuses


def test_unknown_ids_are_404(api) -> None:
    assert api.get("/api/experiments/424242").status_code == 404
    assert api.get("/api/experiments/424242").json() == {
        "detail": "experiment 424242 does not exist"
    }
    assert api.post("/api/experiments/424242/cancel").status_code == 404


def test_a_bad_spec_is_422_naming_field_and_value(api) -> None:
    response = api.post("/api/experiments", json=tiny_spec(cluster={"workers": 0}))
    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "field": "cluster.workers",
            "value": 0,
            "message": "Input should be greater than or equal to 1",
        }
    ]
    assert api.get("/api/experiments").json()["count"] == 0  # nothing was stored


def test_422_names_fields_inside_schedulers_and_datasets(api) -> None:
    spec = tiny_spec(
        schedulers=[{"kind": "herald", "lookahead": -1}],
        dataset={"kind": "synthetic-criteo", "samples": "many"},
    )
    problems = {p["field"]: p for p in api.post("/api/experiments", json=spec).json()["detail"]}
    assert problems["dataset.samples"]["value"] == "many"
    unknown = api.post("/api/experiments", json=tiny_spec(schedulers=[{"kind": "nope"}]))
    assert unknown.status_code == 422 and "nope" in str(unknown.json()["detail"])


def test_a_grid_error_says_which_point(api) -> None:
    response = api.post("/api/experiments", json=tiny_spec(cache={"ratio": [0.1, 2.0]}))
    assert response.status_code == 422
    (problem,) = response.json()["detail"]
    assert problem["field"] == "cache.ratio" and problem["value"] == 2.0
    assert "cache.ratio=2.0" in problem["message"]


def test_a_non_object_body_is_422(api) -> None:
    response = api.post("/api/experiments", json=[1, 2])
    assert response.status_code == 422 and response.json()["detail"][0]["field"]


def test_an_idempotency_key_lands_a_retried_post_once(api) -> None:
    headers = {"Idempotency-Key": "ci-build-17"}
    first = api.post("/api/experiments", json=tiny_spec(), headers=headers).json()
    again = api.post("/api/experiments", json=tiny_spec(), headers=headers).json()
    assert first["id"] == again["id"]
    assert api.get("/api/experiments").json()["count"] == 1


def test_an_experiment_downloads_as_one_archive(api_sqlite) -> None:
    import io
    import zipfile

    experiment_id = submit(api_sqlite, tiny_spec(cache={"ratio": [0.1, 0.2]}))
    wait_finished(api_sqlite, experiment_id)
    response = api_sqlite.get(f"/api/experiments/{experiment_id}/archive")
    assert response.status_code == 200 and response.headers["content-type"] == "application/zip"
    assert f"experiment-{experiment_id}-tiny.zip" in response.headers["content-disposition"]
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = set(archive.namelist())
    assert json.loads(archive.read("results.json"))["id"] == experiment_id
    for group in ("point-0-seed-0", "point-1-seed-0"):
        for file in ("table1.md", "comparison.md", "comparison.csv", "table1.png"):
            assert f"report/{group}/{file}" in names, (group, file, names)
    assert "herald" in archive.read("report/point-1-seed-0/comparison.csv").decode()
    assert api_sqlite.get("/api/experiments/424242/archive").status_code == 404
