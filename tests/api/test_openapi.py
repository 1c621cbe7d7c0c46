"""The OpenAPI document says what the service does: typed spec bodies, and the methods of a path.

Found by schemathesis over the running service (``--checks all``): spec bodies documented as any
object, 405s naming the web UI's methods (or a 404) for a path of the API, a 500 for a scheduler
``kind`` that is not text or a byte size past a float's range, a 400 for a body that is not UTF-8,
and ``lower_bound: 0`` accepted as false although the document says boolean.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator

from heraldbench.api.core.config import Settings
from heraldbench.api.main import create_app
from heraldbench.api.presets import presets
from tests.api.helpers import tiny_spec

DOCUMENT = create_app(Settings(track=False, web_dir="no-web")).openapi()
SPEC_PATHS = ["/api/experiments", "/api/specs/validate", "/api/studies"]


def body_validator(path: str) -> Draft202012Validator:
    """A validator of the body the document gives ``POST path`` (its refs resolved in it)."""
    schema = DOCUMENT["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    return Draft202012Validator({**DOCUMENT, **schema["schema"]})


def valid(path: str, document: Any) -> bool:
    return body_validator(path).is_valid(document)


@pytest.mark.parametrize("path", SPEC_PATHS)
def test_spec_bodies_are_typed_by_the_spec_models(path: str) -> None:
    study = tiny_spec(tuning={"space": {"scheduler.lookahead": {"low": 1, "high": 4}},
                              "objectives": ["traffic"]})  # fmt: skip
    assert valid(path, study)
    assert not valid(path, {**study, "colour": "red"})  # no such field
    assert not valid(path, {**study, "schedulers": [{"kind": "no-such-scheduler"}]})
    assert not valid(path, {**study, "schedulers": [{"kind": "herald", "lookahead": 0}]})
    assert not valid(path, {**study, "cluster": {"workers": True}})
    assert not valid(path, {**study, "lower_bound": 0})
    assert not valid(path, {key: v for key, v in study.items() if key != "dataset"})


@pytest.mark.parametrize("path", ["/api/experiments", "/api/specs/validate"])
def test_grid_bodies_take_lists_of_values_and_every_preset(path: str) -> None:
    grid = tiny_spec(cache={"ratio": [0.05, 0.1]}, seeds=[0, 1],
                     schedulers=[{"kind": "herald", "lookahead": [1, 2]}])  # fmt: skip
    assert valid(path, grid)
    assert not valid(path, {**grid, "seeds": []})
    assert not valid(path, {**grid, "cache": {"ratio": []}})
    assert not valid(path, {**grid, "schedulers": [{"kind": "herald", "lookahead": [1, 1]}]})
    for preset in presets():
        assert valid(path, preset["spec"]), preset["id"]


def test_a_study_body_is_one_spec_with_a_tuning_section() -> None:
    assert not valid("/api/studies", tiny_spec())
    assert not valid("/api/studies", tiny_spec(cache={"ratio": [0.05, 0.1]}, tuning={}))


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("OPTIONS", "/api/experiments", "GET, POST"),
        ("DELETE", "/api/studies", "GET, POST"),
        ("GET", "/api/specs/validate", "POST"),
        ("PUT", "/api/experiments/1/cancel", "POST"),
        ("DELETE", "/api/experiments/1", "GET"),
    ],
)
def test_a_method_a_path_does_not_take_is_a_405_naming_those_it_does(
    method: str, path: str, allowed: str
) -> None:
    app = create_app(Settings(track=False, trusted_hosts=("testserver",)))  # with the web UI
    response = TestClient(app).request(method, path)
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == allowed


@pytest.mark.parametrize("path", SPEC_PATHS)
def test_a_scheduler_kind_that_is_not_text_is_a_422(api_sqlite, path: str) -> None:
    spec = tiny_spec(schedulers=[{"kind": {}}], tuning={"space": {"cache.ratio": {"low": 0.1,
                     "high": 0.5}}, "objectives": ["traffic"]})  # fmt: skip
    response = api_sqlite.post(path, json=spec)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["field"] == "schedulers.0"


@pytest.mark.parametrize("path", SPEC_PATHS)
def test_a_byte_size_too_big_for_a_number_is_a_422(api_sqlite, path: str) -> None:
    spec = tiny_spec(cache={"bytes": "1e400"}, tuning={"space": {"cache.ratio": {"low": 0.1,
                     "high": "9e307GiB"}}, "objectives": ["traffic"]})  # fmt: skip
    response = api_sqlite.post(path, json=spec)
    assert response.status_code == 422, response.text
    assert "finite" in response.json()["detail"][0]["message"]


def test_a_profile_scale_too_small_to_compute_is_a_422(api_sqlite) -> None:
    dataset = {"kind": "synthetic", "profile": "criteo-kaggle", "samples": 1000, "scale": 1e-300}
    response = api_sqlite.post("/api/specs/validate", json=tiny_spec(dataset=dataset))
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["field"] == "dataset.scale"


def test_a_body_that_is_not_utf8_is_a_422(api_sqlite) -> None:
    response = api_sqlite.post(
        "/api/specs/validate", content=b"\xff_", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert "not UTF-8" in response.json()["detail"][0]["message"]


@pytest.mark.parametrize("value", [0, 1, "no", [0, 1]])
def test_a_boolean_knob_takes_only_true_or_false(api_sqlite, value: Any) -> None:
    for document in (tiny_spec(lower_bound=value),
                     tiny_spec(schedulers=[{"kind": "herald-plus", "direct_transfer": value}])):
        response = api_sqlite.post("/api/specs/validate", json=document)
        assert response.status_code == 422, response.text
        assert "where true or false is expected" in response.json()["detail"][0]["message"]


_SERVING = create_app(Settings(track=False, web_dir="no-web", trusted_hosts=("testserver",)))
SERVED = TestClient(_SERVING).get("/openapi.json").json()
RANGES = [{"low": 1, "high": 4}, {"low": 0.01, "high": 0.3, "log": True},
          {"low": 1, "high": 9, "step": 2}, {"choices": ["lru", "lfu"]}]  # fmt: skip
NOT_RANGES = [{}, {"low": 1}, {"high": 4}, {"low": None, "high": 4}, {"log": True},
              {"choices": None}, {"choices": [1], "low": 1}, {"choices": [1], "log": True},
              {"choices": [1], "step": 1}, {"low": 1, "high": 4, "choices": [1]},
              {"low": 1, "high": 16, "step": 1, "log": True}, {"low": 0, "high": 1, "log": True},
              {"choices": [1, 1]}, {"low": 1, "high": 4, "step": 0}]  # fmt: skip


def test_a_search_space_entry_needs_low_and_high_or_choices() -> None:
    """The served document says ParamRange._one_form's rule: a knob given ``{}`` is not a study
    body (schemathesis sent one, and the service answered "give low and high, or choices")."""
    entry = SERVED["components"]["schemas"]["ParamRange"]
    assert {"required": ["low", "high"]}.items() <= entry["anyOf"][0].items()
    assert {"required": ["choices"]}.items() <= entry["anyOf"][1].items()
    check = Draft202012Validator({**SERVED, **entry})
    for document in RANGES:
        assert check.is_valid(document), document
    for document in NOT_RANGES:
        assert not check.is_valid(document), document


@pytest.mark.parametrize("path", SPEC_PATHS)
def test_a_knob_given_no_range_is_schema_invalid_and_a_422(api_sqlite, path: str) -> None:
    def study(entry: Any, knob: str = "scheduler.lookahead") -> dict[str, Any]:
        return tiny_spec(tuning={"space": {knob: entry}, "objectives": ["traffic"]})

    assert valid(path, study({"low": 1, "high": 4}))
    assert not valid(path, study({}))
    assert not valid(path, study({"low": 1, "high": 4}, knob="lookahead"))  # no group
    assert not valid(path, study({"low": 1, "high": 4}, knob="scheduler.colour"))  # no knob
    sizes = {"cache.rows": {"low": 1, "high": 4}, "cache.ratio": {"low": 0.1, "high": 0.5}}
    both = {"space": sizes, "objectives": ["traffic"]}
    assert not valid(path, tiny_spec(tuning=both))
    constraint = {"metric": "traffic"}  # neither min nor max
    assert not valid(path, tiny_spec(tuning={**study({"low": 1, "high": 4})["tuning"],
                                             "constraints": [constraint]}))  # fmt: skip
    response = api_sqlite.post(path, json=study({}))
    assert response.status_code == 422, response.text
    problem = response.json()["detail"][0]
    assert problem["field"] == "tuning.space.scheduler.lookahead"
    assert "give low and high, or choices" in problem["message"]
