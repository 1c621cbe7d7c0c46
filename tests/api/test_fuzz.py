"""Schema-driven fuzzing (schemathesis): no request the OpenAPI schema allows gets a 500.

Cases are generated from the app's own schema and sent through a TestClient whose lifespan ran
(a real SQLite database and a real Dask scheduler, without workers: accepted experiments are
queued, not run). Checks: no 500 (a 5xx must be one the
schema documents: 501 while the tuning pipeline is missing), and every response body matches
the schema documented for its status code, and a body the schema refuses (spec bodies are typed by
the spec models, so that includes a bad knob) is refused (a 4xx), never accepted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import negative_data_rejection, response_schema_conformance

from heraldbench.api.core.config import Settings
from heraldbench.api.main import create_app

# The cluster's threads (heartbeats, tasks) share this process and touch the global `random`
# state while Hypothesis draws; Hypothesis reports that as a deprecation, not a failure of ours.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")

_SCHEMA = create_app(
    Settings(track=False, web_dir="no-web")
).openapi()  # the schema needs no lifespan
schema = schemathesis.openapi.from_dict(_SCHEMA)


@pytest.fixture(scope="module")
def idle_cluster() -> Iterator[Any]:
    """A scheduler with no worker: experiments the fuzzer gets accepted queue and never run.
    The fuzzer checks responses; a spec within the schema's bounds can still ask for more than
    this machine has (a training table of 80,000 rows × 62,982 dims is 20 GB), which must not
    run inside the test process."""
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
