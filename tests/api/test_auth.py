"""Bearer token: mutating endpoints need it once HERALDBENCH_API_TOKEN is set; reads stay open."""

from __future__ import annotations

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
        assert api.post("/api/specs/validate", json=tiny_spec()).status_code == 200  # a read


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
