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


def test_a_database_truncated_under_the_service_is_reported(serve, tmp_path: Path) -> None:
    path = tmp_path / "truncated.db"
    with serve(f"sqlite:///{path}") as api:
        experiment = api.post("/api/experiments", json=tiny_spec()).json()["id"]
        wait_finished(api, experiment)
        path.write_bytes(b"")  # truncated in place: same file, its pages gone
        health = api.get("/api/health")
        assert health.status_code == 503 and "truncated" in health.json()["problem"]
        assert ".recover" in health.json()["problem"]  # how to get back what can be read
        for response in (api.post("/api/experiments", json=tiny_spec()),
                         api.get("/api/experiments"), api.get(f"/api/experiments/{experiment}")):
            assert response.status_code == 503, response.text
            assert "truncated" in response.json()["detail"]


def test_the_service_starts_on_a_damaged_database_and_says_how_to_recover(
    serve, tmp_path: Path
) -> None:
    path = tmp_path / "damaged.db"
    with serve(f"sqlite:///{path}") as api:
        wait_finished(api, api.post("/api/experiments", json=tiny_spec()).json()["id"])
    with path.open("r+b") as stream:  # a damaged header, as a disk error or a stray write leaves
        stream.write(b"\x00" * 100)
    with serve(f"sqlite:///{path}") as api:  # starts, degraded, instead of failing to start
        health = api.get("/api/health")
        assert health.status_code == 503 and health.json()["database"] == "unavailable"
        problem = health.json()["problem"]
        assert str(path) in problem and f"mv {path} {path}.damaged" in problem
        assert api.get("/api/experiments").status_code == 503
        assert api.post("/api/experiments", json=tiny_spec()).status_code == 503
        assert api.get("/api/config").status_code == 200  # the UI can still say what is wrong
    path.rename(f"{path}.damaged")  # the recovery the message gives: afresh
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with serve(f"sqlite:///{path}") as api:
        assert api.get("/api/health").status_code == 200
        assert api.get("/api/experiments").json()["count"] == 0
