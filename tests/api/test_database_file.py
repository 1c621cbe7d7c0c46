"""A SQLite app database deleted under the running service: unhealthy, and writes refused."""

from __future__ import annotations

from pathlib import Path

from tests.api.helpers import tiny_spec, wait_finished


def test_a_deleted_database_file_is_reported_and_writes_are_refused(serve, tmp_path: Path) -> None:
    path = tmp_path / "deleted.db"
    with serve(f"sqlite:///{path}") as api:
        experiment = api.post("/api/experiments", json=tiny_spec()).json()["id"]
        wait_finished(api, experiment)
        assert api.get("/api/health").json()["status"] == "ok"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        health = api.get("/api/health")
        assert health.status_code == 503
        assert health.json()["status"] == "unhealthy"
        assert health.json()["database"] == "unavailable"
        response = api.post("/api/experiments", json=tiny_spec())
        assert response.status_code == 503, response.text
        assert str(path) in response.json()["detail"]
        assert api.post(f"/api/experiments/{experiment}/cancel").status_code == 503


def test_a_replaced_database_file_is_detected(serve, tmp_path: Path) -> None:
    path = tmp_path / "replaced.db"
    with serve(f"sqlite:///{path}") as api:
        assert api.get("/api/health").status_code == 200
        path.rename(tmp_path / "moved.db")
        path.write_bytes(b"")
        assert api.get("/api/health").status_code == 503
        assert api.post("/api/experiments", json=tiny_spec()).status_code == 503
