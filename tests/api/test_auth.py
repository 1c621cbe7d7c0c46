"""Bearer token: mutating endpoints need it once HERALDBENCH_API_TOKEN is set; reads stay open."""

from __future__ import annotations

import pytest

from tests.api.helpers import tiny_spec

TOKEN = "s3cret-token"


def test_posts_need_the_token_and_reads_stay_open(serve, sqlite_url) -> None:
    with serve(sqlite_url, api_token=TOKEN) as api:
        assert api.get("/api/config").json()["auth_required"] is True
        for path, body in (
            ("/api/experiments", tiny_spec()),
            ("/api/experiments/1/cancel", None),
            ("/api/datasets", {"name": "x", "kind": "criteo-tsv", "path": "a"}),
        ):
            response = api.post(path, json=body)
            assert response.status_code == 401, path
            assert response.headers["www-authenticate"] == "Bearer"
            wrong = api.post(path, json=body, headers={"Authorization": "Bearer wrong"})
            assert wrong.status_code == 401
        ok = api.post(
            "/api/experiments", json=tiny_spec(), headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert ok.status_code == 202
        assert api.get("/api/experiments").json()["count"] == 1
        assert api.get(f"/api/experiments/{ok.json()['id']}").status_code == 200
        assert api.post("/api/specs/validate", json=tiny_spec()).status_code == 401  # reads files


def test_reads_can_be_protected_too(serve, sqlite_url) -> None:
    with serve(sqlite_url, api_token=TOKEN, protect_reads=True) as api:
        assert api.get("/api/experiments").status_code == 401
        # Liveness and the UI's bootstrap stay open: neither can carry a token.
        assert api.get("/api/health").status_code == 200
        assert api.get("/api/config").json()["auth_required"] is True
        headers = {"Authorization": f"Bearer {TOKEN}"}
        assert api.get("/api/experiments", headers=headers).status_code == 200


def test_without_a_token_everything_is_open(api_sqlite) -> None:
    assert api_sqlite.get("/api/config").json()["auth_required"] is False
    assert api_sqlite.post("/api/experiments", json=tiny_spec()).status_code == 202


WRONG_CREDENTIALS = [
    {},
    {"authorization": "Bearer wrong"},
    {"authorization": f"Basic {TOKEN}"},
    {"authorization": f"bearer{TOKEN}"},
    {"authorization": f"Bearer {TOKEN}x"},
    {"x-api-key": TOKEN},
    {"cookie": f"token={TOKEN}"},
    {"cookie": f"heraldbench_token={TOKEN}"},
]


@pytest.mark.parametrize("credentials", WRONG_CREDENTIALS)
@pytest.mark.parametrize(
    "path", ["/api/specs/validate", "/api/experiments", "/api/studies", "/api/datasets"]
)
def test_every_endpoint_taking_a_body_needs_the_token(serve, sqlite_url, path, credentials):
    """Validation reads the files a spec names, as a submission does: it is guarded alike."""
    body = {"name": "x", "kind": "criteo-tsv", "path": "a"} if path == "/api/datasets" else {
        **tiny_spec(), "time_profile": "/etc/passwd"}  # fmt: skip
    with serve(sqlite_url, api_token=TOKEN) as api:
        response = api.post(f"{path}?token={TOKEN}", json=body, headers=credentials)
        assert response.status_code == 401, response.text
        assert "passwd" not in response.text and "root" not in response.text


def test_the_openapi_document_declares_the_token_where_it_is_enforced(serve, sqlite_url) -> None:
    for protect in (False, True):
        with serve(sqlite_url, api_token=TOKEN, protect_reads=protect) as api:
            schema = api.get("/openapi.json").json()
            for path, operations in schema["paths"].items():
                for method, operation in operations.items():
                    response = api.request(method.upper(), path.replace("{experiment_id}", "1")
                                           .replace("{study_id}", "1").replace("{dataset_id}", "1")
                                           .replace("{name}", "history"), json={})  # fmt: skip
                    enforced = response.status_code == 401
                    declared = "security" in operation
                    assert enforced == declared, (protect, method, path, response.status_code)
                    assert ("401" in operation["responses"]) == declared, (method, path)
