"""Schema-driven fuzzing (schemathesis, hypothesis): no input gets a 5xx, and the schema tells
the truth.

Cases are generated from the app's own schema and sent through a TestClient whose lifespan ran
(a real SQLite database and a real Dask scheduler, without workers: accepted experiments are
queued, not run). Checks:

* no 500 (a 5xx must be one the schema documents: 501 while the tuning pipeline is missing),
  every response body matches the schema documented for its status code, and a body the schema
  refuses is refused (a 4xx), never accepted;
* a body the schema accepts is accepted, unless one of the rules the document says it cannot
  carry refuses it (docs/api.md: files, limits, cross-field rules): :data:`SUBMISSION_RULES`;
* validation's verdict is submission's, problem for problem;
* text with a lone surrogate and integers beyond 64 bits, anywhere in a spec, are a 422 naming
  where they are.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from schemathesis.checks import negative_data_rejection, response_schema_conformance

from heraldbench.api.core.config import Settings
from heraldbench.api.main import create_app
from tests.api.helpers import tiny_spec

# The cluster's threads (heartbeats, tasks) share this process and touch the global `random`
# state while Hypothesis draws; Hypothesis reports that as a deprecation, not a failure of ours.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")

_SCHEMA = create_app(
    Settings(track=False, web_dir="no-web")
).openapi()  # the schema needs no lifespan
schema = schemathesis.openapi.from_dict(_SCHEMA)

#: The refusals of a body the document accepts that the document says it cannot carry
#: (docs/api.md, "checked on submission"): each a pattern of the problem's message.
SUBMISSION_RULES = re.compile("|".join([
    # files a spec names: under a data folder, existing, of the right kind, readable
    r"does not lie under a data folder", r"does not exist", r"is a folder", r"not a regular file",
    r"is not a prepared dataset", r"give the path of a file", r"not a usable path",
    r"not a readable YAML file", r"not a hardware profile", r"heraldbench workload profile",
    # what a run needs of a machine, and the grid's size
    r"the grid has [\d,]+ runs", r"cannot hold one worker's ids", r"needs an estimated",
    r"int32 markers", r"at most 4 EiB", r"a byte size must be positive",
    # rules across fields
    r"low must be below high", r"multiple of step", r"must be finite", r"integer step",
    r"has no knob", r"give integer ends", r"is not in schedulers", r"name the schedulers entry",
    r"is measured by training", r"pruning", r"is above max", r"smaller than one row",
    r"listed twice", r"repeat a value", r"is listed more than once", r"seeds: ",
    # shaped links (train.distributed.links): tc's rates and durations, inside with hosts
    r"as a link rate", r"as a duration", r"unknown rate unit", r"unknown duration unit",
    r"a link rate must be", r"a duration must be", r"needs inside",
    r"a trial at", r"samples a whole percent",
    # multi-hot and sequence features against the dataset's tables
    r"sizes for the dataset's \d+ tables", r"no table named", r"is already a table",
    r"min_length \d+ exceeds length \d+",
    r"items needs frequency_threshold 0 or 1", r"is an attribute table",
    # a cache sized once at every grid point (a scalar and an axis of two sizes)
    r"give exactly one of rows, bytes or ratio",
    r"bytes on a device for the tables'",
    # the cluster's hosts and devices, a spec's placements and its baseline
    r"cluster\.hosts", r"placement '[\w-]+': ", r"neither a listed scheduler nor a listed placement",
    r"[\w-]+ does not fit: ",
    # a placement study: its entry, its names, its mode and the metrics it measures
    r"a placement study", r"name the placements entry", r"placements \(\[", r"study measures",
    r"a study tunes one scheduler or one placement", r"modelled without overlap",
]))


@pytest.fixture(scope="module")
def idle_cluster() -> Iterator[Any]:
    """A scheduler with no worker: experiments the fuzzer gets accepted queue and never run.
    The fuzzer checks responses; a spec within the schema's bounds can still ask for more than
    this machine has, which must not run inside the test process."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=":0") as cluster:
        yield cluster


@pytest.fixture(scope="module")
def fuzz_client(tmp_path_factory: pytest.TempPathFactory, idle_cluster: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "data").mkdir()
    app = create_app(
        Settings(
            home=folder / "home",
            database_url=f"sqlite:///{folder / 'app.db'}",
            dask_scheduler_address=idle_cluster.scheduler.address,
            track=False,
            data_dirs=(folder / "data",),
            web_dir=folder / "no-web",
            trusted_hosts=("testserver",),
        )
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def _httpx_kwargs(case: Any) -> dict[str, Any]:
    """schemathesis's requests-style arguments as httpx takes them."""
    request = case.as_transport_kwargs(base_url="http://testserver")
    request.pop("cookies", None)  # the API takes none; httpx deprecates per-request cookies
    if isinstance(request.get("data"), (bytes, str)):
        request["content"] = request.pop("data")  # raw bodies go as content in httpx
    return request


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_request_gets_a_server_error(case: Any, fuzz_client: Any) -> None:
    response = fuzz_client.request(**_httpx_kwargs(case))
    operation = _SCHEMA["paths"][case.path].get(case.method.lower(), {})  # also unsupported methods
    documented = operation.get("responses", {})
    if response.status_code >= 500:  # only a documented refusal (501: no tuning pipeline)
        assert response.status_code != 500 and str(response.status_code) in documented, (
            response.text
        )
    case.validate_response(response, checks=[response_schema_conformance, negative_data_rejection])


SPEC_BODIES = [("/api/specs/validate", "POST"), ("/api/studies", "POST")]


def _body_validator(path: str, method: str) -> Any:
    """The document's schema of an operation's body, as a JSON Schema validator (the judge of
    what the document accepts; generators may stray from it)."""
    from jsonschema import Draft202012Validator

    body = _SCHEMA["paths"][path][method.lower()]["requestBody"]["content"]["application/json"]
    return Draft202012Validator({**body["schema"], "components": _SCHEMA["components"]})


@pytest.mark.parametrize(("path", "method"), SPEC_BODIES)
def test_a_body_the_schema_accepts_is_accepted(path: str, method: str, fuzz_client: Any) -> None:
    """Refused only by a rule the document says it cannot carry (docs/api.md)."""
    validator = _body_validator(path, method)

    @given(body=schema[path][method].as_strategy().map(lambda case: case.body))
    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    def accepted(body: Any) -> None:
        assume(validator.is_valid(body))
        response = fuzz_client.post(path, json=body)
        assert response.status_code in (200, 202, 422), response.text
        if response.status_code == 422:
            for problem in response.json()["detail"]:
                # a value of a searched knob, checked against the scheduler it tunes
                searched = (problem["field"] or "").startswith("tuning.space.")
                assert searched or SUBMISSION_RULES.search(problem["message"]), (body, problem)

    accepted()


@given(case=schema["/api/specs/validate"]["POST"].as_strategy())
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
def test_validation_says_what_submission_does(case: Any, fuzz_client: Any) -> None:
    validated = fuzz_client.post("/api/specs/validate", json=case.body)
    submitted = fuzz_client.post("/api/experiments", json=case.body)
    assert (validated.status_code, submitted.status_code) in ((200, 202), (422, 422)), (
        validated.text, submitted.text)  # fmt: skip
    if validated.status_code == 422:
        assert validated.json() == submitted.json()


def _places(document: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every value's place in a document (its keys and list indices)."""
    yield path
    items = document.items() if isinstance(document, dict) else (
        enumerate(document) if isinstance(document, list) else ())  # fmt: skip
    for key, value in items:
        yield from _places(value, (*path, str(key)))


def _set(document: Any, path: tuple[str, ...], value: Any) -> Any:
    out = copy.deepcopy(document)
    node = out
    for step in path[:-1]:
        node = node[int(step)] if isinstance(node, list) else node[step]
    node[int(path[-1]) if isinstance(node, list) else path[-1]] = value
    return out


SPEC = tiny_spec(schedulers=[{"kind": "naive"}, {"kind": "herald", "lookahead": 2}])
UNSTORABLE = st.one_of(
    st.integers(min_value=2**63).map(lambda n: n if n % 2 else -n - 1),
    st.text(min_size=0, max_size=5).map(lambda t: t + "\ud800"),
    st.text(min_size=0, max_size=5).map(lambda t: "\udfff" + t),
)


@given(place=st.sampled_from([p for p in _places(SPEC) if p]), value=UNSTORABLE)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_what_cannot_be_stored_is_refused_where_it_is(place, value, fuzz_client) -> None:
    body = _set(SPEC, place, value)
    raw = __import__("json").dumps(body).encode()  # \\ud800 escapes: valid JSON, no Unicode
    for path in ("/api/specs/validate", "/api/experiments", "/api/studies"):
        response = fuzz_client.post(path, content=raw, headers={"content-type": "application/json"})
        assert response.status_code == 422, (path, response.text)
        assert response.json()["detail"][0]["field"] == ".".join(place), response.text
