"""Trusted hosts, security headers, the Dask dashboard's address and the OpenAPI security."""

from __future__ import annotations

import pytest

from heraldbench.api.core.config import Settings
from heraldbench.api.main import create_app
from heraldbench.api.security import host_name


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
