"""Workload profiles over the API: a built-in name or a file under a data folder; nothing else."""

from __future__ import annotations

from pathlib import Path

import yaml

from heraldbench.platform.data.workload import save_profile
from tests.api.helpers import submit, tiny_spec, wait_finished
from tests.platform.data.workload.planted import planted_profile


def _spec(profile: str) -> dict:
    return tiny_spec(dataset={"kind": "synthetic", "profile": profile, "samples": 2048, "seed": 1},
                     cache={"rows": 500})  # fmt: skip  (16 x 26 ids must fit)


def test_a_profile_under_the_data_folder_runs(api, data_dir: Path) -> None:
    save_profile(planted_profile(), data_dir / "mine.yaml")
    # In a fresh checkout the first profile-driven run compiles the generator's kernels first.
    experiment = wait_finished(api, submit(api, _spec("mine.yaml")), timeout=180)
    assert experiment["status"] == "succeeded", experiment["error"]


def test_the_built_in_profile_needs_no_file(api_sqlite) -> None:
    response = api_sqlite.post("/api/specs/validate", json=_spec("criteo-kaggle"))
    assert response.status_code == 200, response.text


def test_profiles_outside_the_data_folders_or_bad_are_422(api_sqlite, data_dir: Path) -> None:
    for path in ("/etc/passwd", "../outside.yaml"):
        response = api_sqlite.post("/api/experiments", json=_spec(path))
        assert response.status_code == 422, path
        (problem,) = response.json()["detail"]
        assert problem["field"] == "dataset.profile" and "data folder" in problem["message"]
    document = planted_profile().model_dump(mode="json")
    document["roots"][0]["rate"] = -1
    (data_dir / "bad.yaml").write_text(yaml.safe_dump(document))
    (data_dir / "notes.txt").write_text("not a profile")
    for name, words in (("bad.yaml", "roots.0.rate"), ("notes.txt", "not a heraldbench workload"),
                        ("missing.yaml", "does not exist")):  # fmt: skip
        response = api_sqlite.post("/api/experiments", json=_spec(name))
        assert response.status_code == 422, name
        (problem,) = response.json()["detail"]
        assert problem["field"] == "dataset.profile" and words in problem["message"], problem
