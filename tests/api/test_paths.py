"""Every field of the API that names a file is confined to the data folders, on every endpoint.

The fields are found in the OpenAPI document (``"format": "path"``), so a field added later is
walked too: the test fails until it says how to submit it. Each is tried with paths that escape
the data folders (absolute, relative, through a symbolic link, a URL) and with what lies inside
them but must not be opened (a FIFO, a device, a folder, the kernel's views), on each endpoint
that takes it. A refusal is a 422 naming the field, in well under a second, quoting no file and
never where a link points.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from heraldbench.api.core.config import Settings
from heraldbench.api.main import create_app
from tests.api.helpers import tiny_spec

SECRET = "topsecret-value-42"
TUNING = {"space": {"scheduler.lookahead": {"low": 1, "high": 2}}, "objectives": ["traffic"],
          "trials": 1}  # fmt: skip


def path_fields(schema: dict[str, Any]) -> set[tuple[str, str]]:
    """(component, property) of every property typed as a path (grids excluded: they repeat
    their models)."""
    found = set()
    for name, component in schema["components"]["schemas"].items():
        if name.endswith("Grid"):
            continue
        for prop, spec in component.get("properties", {}).items():
            options = [spec, *spec.get("anyOf", [])]
            if any(o.get("format") == "path" for o in options):
                found.add((name, prop))
    return found


#: A ratings file inside the data folders (each test writes it), beside a movie file that escapes.
RATINGS = "ratings.data"


def _dataset(kind: str, field: str, value: str) -> dict[str, Any]:
    extra = {"samples": 1000} if kind == "synthetic" else {}
    return {"kind": kind, field: value, **extra}


#: How each path field of the document is submitted: (endpoints, body of a value).
SUBMISSIONS = {
    ("ExperimentSpec", "time_profile"): lambda v: {**tiny_spec(), "time_profile": v},
    ("CriteoTSVSpec", "path"): lambda v: tiny_spec(dataset=_dataset("criteo-tsv", "path", v)),
    ("AvazuCSVSpec", "path"): lambda v: tiny_spec(dataset=_dataset("avazu-csv", "path", v)),
    ("MovieLensSpec", "path"): lambda v: tiny_spec(dataset=_dataset("movielens", "path", v)),
    ("MovieLensSpec", "items"): lambda v: tiny_spec(
        dataset={"kind": "movielens", "path": RATINGS, "items": v}),
    ("PreparedSpec", "path"): lambda v: tiny_spec(dataset=_dataset("prepared", "path", v)),
    ("SyntheticProfileSpec", "profile"):
        lambda v: tiny_spec(dataset=_dataset("synthetic", "profile", v)),
    ("DatasetCreate", "path"): lambda v: {"name": "x", "kind": "criteo-tsv", "path": v},
}
FIELD = {("DatasetCreate", "path"): "path", ("ExperimentSpec", "time_profile"): "time_profile"}


def test_every_path_field_of_the_document_is_walked() -> None:
    schema = create_app(Settings(track=False, web_dir="no-web")).openapi()
    assert path_fields(schema) == set(SUBMISSIONS)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.yaml"
    secret.parent.mkdir()
    secret.write_text(f"format: heraldbench-hardware-profile\nname: {SECRET}\n")
    return secret


def escapes(data_dir: Path, outside: Path) -> list[str]:
    """Paths a submission must not get opened: outside the data folders, or no data."""
    link = data_dir / "innocent.yaml"
    link.symlink_to(outside)
    (data_dir / "folder").mkdir()
    os.mkfifo(data_dir / "pipe")
    relative = os.path.relpath(outside, Path.cwd())
    return [
        str(outside), relative, "../" * 12 + str(outside).lstrip("/"), str(link), "innocent.yaml",
        outside.as_uri(), "/etc/passwd", "/proc/self/status", "/dev/zero", "/", "",
        str(data_dir / "pipe"), "pipe", str(data_dir / "folder"), str(data_dir / ".." / "outside"),
        "a\x00b",
    ]


def _post(api: Any, path: str, body: dict[str, Any]) -> Any:
    """The response, from a thread: a request that hangs (a FIFO opened) fails the test."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(api.post(path, json=body)), daemon=True)
    thread.start()
    thread.join(timeout=20)
    assert result, f"{path} did not answer within 20 s: a file was opened that never ends"
    return result[0]


def _endpoints(key: tuple[str, str]) -> list[str]:
    if key == ("DatasetCreate", "path"):
        return ["/api/datasets"]
    return ["/api/specs/validate", "/api/experiments", "/api/studies"]


@pytest.mark.parametrize("key", sorted(SUBMISSIONS))
def test_paths_that_escape_are_refused_everywhere(api_sqlite, data_dir, outside, key) -> None:
    field = FIELD.get(key, f"dataset.{key[1]}")
    (data_dir / RATINGS).write_text("1\t1\t4\t1\n")
    for value in escapes(data_dir, outside):
        for endpoint in _endpoints(key):
            body = SUBMISSIONS[key](value)
            if endpoint == "/api/studies":
                body = {**body, "tuning": TUNING, "schedulers": [{"kind": "herald"}]}
            response = _post(api_sqlite, endpoint, body)
            assert response.status_code == 422, (endpoint, value, response.text)
            problem = response.json()["detail"][0]
            assert problem["field"] == field, (endpoint, value, problem)
            assert SECRET not in response.text and "root:" not in response.text
            if value.endswith("innocent.yaml"):  # a link: where it points is not told
                assert str(outside) not in response.text, response.text
    assert api_sqlite.get("/api/experiments").json()["count"] == 0
    assert api_sqlite.get("/api/studies").json()["count"] == 0
    assert api_sqlite.get("/api/datasets").json()["count"] == 0


def test_a_link_inside_the_data_folders_to_a_file_inside_is_followed(api_sqlite, data_dir):
    profile = data_dir / "profiles" / "mine.yaml"
    profile.parent.mkdir()
    profile.write_text("not: a profile\n")
    (data_dir / "alias.yaml").symlink_to(profile)
    response = api_sqlite.post("/api/specs/validate",
                               json={**tiny_spec(), "time_profile": "alias.yaml"})  # fmt: skip
    assert response.status_code == 422
    problem = response.json()["detail"][0]
    assert problem["field"] == "time_profile" and "not a hardware profile" in problem["message"]


def test_a_bad_file_inside_the_data_folders_is_not_quoted(api_sqlite, data_dir) -> None:
    """A refusal of what a file holds names the file and the field, not the text found."""
    bad = data_dir / "bad.yaml"
    bad.write_text(f"format: heraldbench-hardware-profile\nversion: 1\nname: [{SECRET}\n")
    for text in (bad.read_text(), f"format: {SECRET}\n"):
        bad.write_text(text)
        response = api_sqlite.post("/api/specs/validate",
                                   json={**tiny_spec(), "time_profile": str(bad)})  # fmt: skip
        assert response.status_code == 422
        assert SECRET not in response.text
