"""Trusted hosts, security headers, the Dask dashboard's address and the OpenAPI security."""

from __future__ import annotations

import json

import pytest

from heraldbench.api.core.config import Settings
from heraldbench.api.main import create_app
from heraldbench.api.security import host_name
from tests.api.helpers import submit, tiny_spec


@pytest.fixture
def loopback_api(serve, sqlite_url):
    """A service with the default trusted hosts (the loopback names)."""
    with serve(sqlite_url, trusted_hosts=Settings.model_fields["trusted_hosts"].default) as api:
        yield api


@pytest.mark.parametrize("host", ["localhost:8000", "127.0.0.1", "[::1]:8000", "LOCALHOST"])
def test_loopback_hosts_are_answered(loopback_api, host: str) -> None:
    assert loopback_api.get("/api/health", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example"])
def test_other_hosts_are_refused_as_dns_rebinding_would_send_them(loopback_api, host) -> None:
    """A rebinding page resolves its own name to 127.0.0.1 but still sends that name."""
    response = loopback_api.get("/api/experiments", headers={"host": host})
    assert response.status_code == 400
    assert loopback_api.post("/api/experiments", json={}, headers={"host": host}).status_code == 400


def test_trusted_hosts_are_configurable(monkeypatch, serve, sqlite_url) -> None:
    monkeypatch.setenv("HERALDBENCH_TRUSTED_HOSTS", "bench.lab, *.example.org")
    hosts = Settings().trusted_hosts
    assert hosts == ("bench.lab", "*.example.org")
    with serve(sqlite_url, trusted_hosts=hosts) as api:
        for host, status in (("bench.lab", 200), ("a.example.org", 200), ("localhost", 400)):
            assert api.get("/api/health", headers={"host": host}).status_code == status


def test_every_response_carries_the_security_headers(serve, sqlite_url, tmp_path) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>ui</title>")
    with serve(sqlite_url, web_dir=web) as api:
        for path in ("/", "/api/health", "/api/experiments/999", "/docs"):
            headers = api.get(path).headers
            assert headers["x-frame-options"] == "DENY", path
            assert headers["x-content-type-options"] == "nosniff", path
            assert "frame-ancestors 'none'" in headers["content-security-policy"], path
        ui = api.get("/").headers["content-security-policy"]
        assert "script-src 'self';" in ui and "cdn" not in ui
        assert "cdn.jsdelivr.net" in api.get("/docs").headers["content-security-policy"]


def test_the_dask_dashboard_listens_on_loopback_by_default(monkeypatch) -> None:
    monkeypatch.delenv("HERALDBENCH_DASHBOARD_ADDRESS", raising=False)
    assert host_name(Settings().dashboard_address) == "127.0.0.1"


def test_openapi_declares_bearer_security_only_with_a_token() -> None:
    def secured(settings: Settings) -> tuple[bool, bool]:
        schema = create_app(settings).openapi()
        operations = [op for ops in schema["paths"].values() for op in ops.values()]
        return (
            any("security" in op or "401" in op["responses"] for op in operations),
            "securitySchemes" in schema.get("components", {}),
        )

    assert secured(Settings(track=False, web_dir="no-web")) == (False, False)
    assert secured(Settings(track=False, web_dir="no-web", api_token="t")) == (True, True)


@pytest.mark.parametrize(
    "host",
    ["localhost:evil.com", "localhost:80:80", "user@localhost", "localhost/x", "[::1]:x",
     "localhost:99999", "", " "],
)
def test_hosts_that_do_not_parse_are_refused(loopback_api, host: str) -> None:
    """A name and a numeric port, nothing else: ``localhost:evil.com`` is not localhost."""
    assert loopback_api.get("/api/health", headers={"host": host}).status_code == 400


def test_a_body_over_the_limit_carries_the_security_headers(serve, sqlite_url) -> None:
    with serve(sqlite_url, max_body_bytes=1024) as api:
        response = api.post("/api/specs/validate", content=b"{" + b" " * 4096 + b"}",
                            headers={"content-type": "application/json"})  # fmt: skip
        assert response.status_code == 413
        assert response.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


CHANGES = [
    ("/api/experiments", tiny_spec()),
    ("/api/experiments/1/cancel", None),
    ("/api/studies/1/cancel", None),
    ("/api/specs/validate", tiny_spec()),
]


@pytest.mark.parametrize("token", [None, "t0ken"])
@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.com"},
        {"origin": "null"},
        {"origin": "http://testserver:8001"},
        {"referer": "http://evil.com/page.html"},
        {"sec-fetch-site": "cross-site"},
    ],
)
def test_changes_from_another_origin_are_refused(serve, sqlite_url, token, headers) -> None:
    """A page elsewhere cannot drive the user's browser to submit or cancel, token or not."""
    with serve(sqlite_url, api_token=token) as api:
        auth = {"authorization": f"Bearer {token}"} if token else {}
        for path, body in CHANGES:
            response = api.post(path, json=body, headers={**headers, **auth})
            assert response.status_code == 403, (path, response.text)
        assert api.get("/api/experiments").json()["count"] == 0


def test_a_cross_site_form_cannot_cancel(api_sqlite) -> None:
    experiment = submit(api_sqlite, tiny_spec(dataset={**tiny_spec()["dataset"], "samples": 20000}))
    form = {"origin": "http://evil.com", "content-type": "application/x-www-form-urlencoded"}
    assert api_sqlite.post(f"/api/experiments/{experiment}/cancel", headers=form).status_code == 403
    assert api_sqlite.get(f"/api/experiments/{experiment}").json()["status"] != "cancelled"


def test_changes_from_the_service_own_origin_are_accepted(api_sqlite) -> None:
    own = {"origin": "http://testserver", "referer": "http://testserver/#/new",
           "sec-fetch-site": "same-origin"}  # fmt: skip
    assert api_sqlite.post("/api/specs/validate", json=tiny_spec(), headers=own).status_code == 200


@pytest.mark.parametrize(
    "content_type",
    ["application/json; charset=utf-16", "text/plain", "application/x-www-form-urlencoded",
     "multipart/form-data; boundary=x", "application/json; charset=latin-1"],
)
def test_bodies_must_be_json_in_utf8(api_sqlite, content_type: str) -> None:
    body = json.dumps(tiny_spec())
    raw = body.encode("utf-16") if "utf-16" in content_type else body.encode()
    response = api_sqlite.post("/api/experiments", content=raw,
                               headers={"content-type": content_type})  # fmt: skip
    assert response.status_code == 415, response.text
    assert "application/json" in response.json()["detail"]
    assert api_sqlite.get("/api/experiments").json()["count"] == 0


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=UTF-8"])
def test_json_in_utf8_is_accepted(api_sqlite, content_type: str) -> None:
    response = api_sqlite.post("/api/specs/validate", content=json.dumps(tiny_spec()).encode(),
                               headers={"content-type": content_type})  # fmt: skip
    assert response.status_code == 200, response.text
