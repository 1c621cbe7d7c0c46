"""A real ``heraldbench serve`` process: 100 concurrent submissions, and a kill -9 mid-run.

Slow (each starts the service with its LocalCluster of worker processes): run with --runslow.
The figures of the load test come from ``benchmarks/bench_api_load.py``, which these reuse.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from benchmarks.bench_api_load import (
    free_port,
    listed,
    request,
    stop,
    submit_all,
    verify,
    wait_all,
    wait_healthy,
)

from tests.api.conftest import POSTGRES_ENV
from tests.api.helpers import TERMINAL, poll, tiny_spec

pytestmark = pytest.mark.slow


def _serve(home: Path, port: int, database_url: str) -> subprocess.Popen:
    command = [
        str(Path(sys.executable).with_name("heraldbench")),
        "serve",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    env = {
        **os.environ,
        "HERALDBENCH_HOME": str(home),
        "HERALDBENCH_DATABASE_URL": database_url,
        "HERALDBENCH_TRACK": "false",
        "HERALDBENCH_DASHBOARD_ADDRESS": ":0",
    }
    with (home / "serve.log").open("ab") as log:  # the child keeps its own descriptor
        return subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True)


@pytest.fixture(params=["sqlite", "postgres"])
def served_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The served process's database: SQLite, and PostgreSQL when configured."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'app.db'}"
        return
    server = os.environ.get(POSTGRES_ENV)
    if not server:
        pytest.skip(f"{POSTGRES_ENV} is not set")
    import psycopg
    from sqlalchemy.engine import make_url

    admin = make_url(server.replace("postgresql+psycopg://", "postgresql://"))
    name = f"heraldbench_test_serve_{os.getpid()}"
    with psycopg.connect(
        admin.render_as_string(hide_password=False), autocommit=True
    ) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    yield admin.set(drivername="postgresql+psycopg", database=name).render_as_string(
        hide_password=False
    )
    with psycopg.connect(
        admin.render_as_string(hide_password=False), autocommit=True
    ) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_100_concurrent_submissions_land_once_and_run(served_database: str, tmp_path: Path) -> None:
    process, base = _start(tmp_path, served_database)
    try:
        results, _ = submit_all(base, 100, 100, None)
        report = verify(results, listed(base, None))
        assert report == {
            "submitted": 100,
            "accepted_202": 100,
            "landed": 100,
            "lost": 0,
            "duplicated": 0,
            "ids_unique": True,
            "ids_listed": True,
        }
        statuses, _ = wait_all(base, {r["name"] for r in results}, None, timeout=600)
        assert statuses == {"succeeded": 100}
    finally:
        stop(process)


def test_a_killed_service_restarts_with_every_record(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'app.db'}"
    process, base = _start(tmp_path, database_url)
    finished = _post(base, tiny_spec(name="finished"))
    poll(lambda: _status(base, finished) in TERMINAL, timeout=120)
    slow = tiny_spec(
        name="interrupted",
        dataset={"kind": "synthetic-criteo", "samples": 300_000, "scale": 0.01},
        seeds=[0, 1, 2, 3],
    )
    interrupted = _post(base, slow)
    poll(lambda: _status(base, interrupted) == "running", timeout=120)
    stop(process, signal.SIGKILL)  # the API and its LocalCluster die at once
    process, base = _start(tmp_path, database_url)
    try:
        names = {e["name"]: e for e in listed(base, None)}
        assert names["finished"]["status"] == "succeeded"
        experiment = poll(lambda: _terminal(base, interrupted), timeout=300)
        statuses = {r["status"] for r in experiment["runs"]}
        assert statuses <= {"succeeded", "failed"}  # none left running or queued
        failed = [r for r in experiment["runs"] if r["status"] == "failed"]
        assert failed and all(r["error"].startswith("orphaned") for r in failed)  # were running
        assert "succeeded" in statuses  # were queued: resubmitted after the restart
        assert experiment["status"] == "failed" and "runs failed" in experiment["error"]
    finally:
        stop(process)


def _start(home: Path, database_url: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = _serve(home, port, database_url)
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base, process=process)
    return process, base


def _post(base: str, spec: dict) -> int:
    status, body = request("POST", f"{base}/api/experiments", spec)
    assert status == 202, body
    return body["id"]


def _status(base: str, experiment_id: int) -> str:
    return request("GET", f"{base}/api/experiments/{experiment_id}")[1]["status"]


def _terminal(base: str, experiment_id: int) -> dict | None:
    body = request("GET", f"{base}/api/experiments/{experiment_id}")[1]
    return body if body["status"] in TERMINAL else None
