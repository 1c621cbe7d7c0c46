"""Request bodies: strict JSON, non-finite numbers, a size limit and short echoes."""

from __future__ import annotations

import json

import pytest

from tests.api.helpers import tiny_spec

#: "a few hundred characters": the most a 422 may echo of one value.
ECHO_CHARS = 400


def _post(api, text: str, path: str = "/api/specs/validate"):
    return api.post(path, content=text, headers={"Content-Type": "application/json"})


@pytest.mark.parametrize(
    ("number", "said"),
    [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("1e400", "1e400")],
)
@pytest.mark.parametrize("path", ["/api/specs/validate", "/api/experiments"])
def test_non_finite_numbers_are_a_422_not_a_500(api_sqlite, number: str, said: str, path) -> None:
    text = json.dumps(tiny_spec(embedding_dim=1)).replace('"embedding_dim": 1', f'"x": {number}')
    response = _post(api_sqlite, text, path)
    assert response.status_code == 422, response.text
    assert said in response.json()["detail"][0]["message"]
    assert api_sqlite.get("/api/experiments").json()["count"] == 0


def test_a_non_finite_value_is_echoed_as_text() -> None:
    """A value JSON cannot hold (NaN from YAML's ``.nan``) is shown as text in the 422."""
    from heraldbench.api.errors import error_response
    from heraldbench.platform.exceptions import SpecError
    from heraldbench.platform.spec import parse_spec

    document = tiny_spec(cache={"ratio": float("nan")})
    with pytest.raises(SpecError) as caught:
        parse_spec(document)
    response = error_response(caught.value, document)
    assert response.status_code == 422
    problem = json.loads(response.body)["detail"][0]
    assert problem["field"] == "cache.ratio" and problem["value"] == "nan"


def test_duplicate_keys_are_refused(api_sqlite) -> None:
    text = json.dumps(tiny_spec())[:-1] + ', "name": "other"}'
    response = _post(api_sqlite, text)
    assert response.status_code == 422, response.text
    assert "duplicate key 'name'" in response.json()["detail"][0]["message"]
    response = _post(api_sqlite, text, "/api/experiments")
    assert response.status_code == 422
    assert api_sqlite.get("/api/experiments").json()["count"] == 0


def test_a_body_over_the_limit_is_a_413_before_it_is_parsed(serve, sqlite_url) -> None:
    big = tiny_spec(name="x" * (2 * 1024 * 1024))
    with serve(sqlite_url) as api:
        response = api.post("/api/experiments", json=big)
        assert response.status_code == 413
        assert len(response.content) < 1000
        assert api.post("/api/specs/validate", json=big).status_code == 413
        assert api.get("/api/experiments").json()["count"] == 0
    with serve(sqlite_url, max_body_bytes=4 * 1024 * 1024) as api:
        response = api.post("/api/specs/validate", json=big)
        assert response.status_code == 422  # parsed: the name is too long


def test_echoed_values_are_cut(api_sqlite) -> None:
    long_name = "n" * 500_000
    response = api_sqlite.post("/api/specs/validate", json=tiny_spec(name=long_name))
    assert response.status_code == 422
    assert len(response.content) < 2 * ECHO_CHARS + 500
    value = response.json()["detail"][0]["value"]
    assert value.startswith("nnnn") and "500,000 characters" in value
    response = api_sqlite.post(
        "/api/datasets", json={"name": "d", "kind": "criteo-tsv", "path": "p" * 4000}
    )
    assert response.status_code == 422 and len(response.content) < 2 * ECHO_CHARS + 500
