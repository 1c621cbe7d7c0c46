"""Datasets: a raw file under a data folder is prepared on Dask; paths elsewhere are refused."""

from __future__ import annotations

from pathlib import Path

from tests.api.helpers import TERMINAL, poll, submit, tiny_spec, wait_finished
from tests.pipelines.preprocess.rawfiles import criteo


def _wait_dataset(api, dataset_id: int) -> dict:
    def finished() -> dict | None:
        body = api.get(f"/api/datasets/{dataset_id}").json()
        return body if body["status"] in TERMINAL else None

    return poll(finished, timeout=120)


def test_a_registered_file_is_prepared_and_usable_in_a_spec(api, data_dir: Path) -> None:
    criteo(data_dir / "day0.tsv", lines=400)
    response = api.post(
        "/api/datasets", json={"name": "day0", "kind": "criteo-tsv", "path": "day0.tsv"}
    )
    assert response.status_code == 202 and response.headers["location"].endswith(
        str(response.json()["id"])
    )
    dataset = _wait_dataset(api, response.json()["id"])
    assert dataset["status"] == "succeeded", dataset["error"]
    assert dataset["stats"]["samples"] == 400 and len(dataset["stats"]["tables"]) == 26
    assert dataset["path"] == str((data_dir / "day0.tsv").resolve())
    assert api.get("/api/datasets").json()["count"] == 1
    spec = tiny_spec(dataset=dataset["spec"], cache={"rows": 500})
    experiment = wait_finished(api, submit(api, spec))
    assert experiment["status"] == "succeeded", experiment["error"]


def test_paths_outside_the_data_folders_are_422(api_sqlite, data_dir: Path) -> None:
    for path in ("/etc/passwd", "../../etc/passwd", str(data_dir / ".." / "outside.tsv")):
        response = api_sqlite.post(
            "/api/datasets", json={"name": "x", "kind": "criteo-tsv", "path": path}
        )
        assert response.status_code == 422, path
        (problem,) = response.json()["detail"]
        assert problem["field"] == "path" and problem["value"] == path
        assert "data folder" in problem["message"]
    spec = tiny_spec(dataset={"kind": "criteo-tsv", "path": "/etc/passwd"})
    (problem,) = api_sqlite.post("/api/experiments", json=spec).json()["detail"]
    assert (problem["field"], problem["value"]) == ("dataset.path", "/etc/passwd")


def test_a_symlink_out_of_the_data_folder_is_refused(api_sqlite, data_dir: Path) -> None:
    (data_dir / "escape").symlink_to("/etc/passwd")
    response = api_sqlite.post(
        "/api/datasets", json={"name": "x", "kind": "criteo-tsv", "path": "escape"}
    )
    assert response.status_code == 422


def test_a_missing_file_and_a_bad_kind_are_422(api_sqlite) -> None:
    missing = api_sqlite.post(
        "/api/datasets", json={"name": "x", "kind": "criteo-tsv", "path": "nope.tsv"}
    )
    assert missing.status_code == 422 and missing.json()["detail"][0]["field"] == "path"
    bad = api_sqlite.post("/api/datasets", json={"name": "x", "kind": "parquet", "path": "a"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "kind"
    assert bad.json()["detail"][0]["value"] == "parquet"


def test_unknown_datasets_are_404(api_sqlite) -> None:
    assert api_sqlite.get("/api/datasets/99").status_code == 404


def test_the_forms_placeholder_path_works_as_written(serve, sqlite_url, tmp_path, monkeypatch):
    """With the default data folder (./data), the path the form suggests is the one to type."""
    import re

    form = (Path(__file__).resolve().parents[2] / "web/js/pages/datasets.js").read_text()
    placeholder = re.search(r'id: "ds-path".*?placeholder: "([^"]+)"', form)[1]
    monkeypatch.chdir(tmp_path)
    (tmp_path / placeholder).parent.mkdir(parents=True, exist_ok=True)
    criteo(tmp_path / placeholder, lines=50)
    with serve(sqlite_url, data_dirs=(Path("data"),)) as api:
        response = api.post(
            "/api/datasets", json={"name": "day0", "kind": "criteo-tsv", "path": placeholder}
        )
        assert response.status_code == 202, response.text
        dataset = _wait_dataset(api, response.json()["id"])
        assert dataset["path"] == str((tmp_path / placeholder).resolve())


def test_path_errors_say_which_path_was_tried(api_sqlite, data_dir: Path) -> None:
    response = api_sqlite.post(
        "/api/datasets", json={"name": "x", "kind": "criteo-tsv", "path": "missing/day.tsv"}
    )
    assert response.status_code == 422
    assert str(data_dir.resolve() / "missing" / "day.tsv") in response.json()["detail"][0]["message"]
    response = api_sqlite.post(
        "/api/datasets", json={"name": "x", "kind": "criteo-tsv", "path": "/etc/passwd"}
    )
    assert "/etc/passwd does not lie under a data folder" in response.json()["detail"][0]["message"]
