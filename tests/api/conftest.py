"""Fixtures of the API tests: one real LocalCluster for the package (the fuzz module keeps one
without workers of its own), a real database per test.

The cluster's workers are threads of the test process (``processes=False``, TCP so apps on
other event loops reach it); each test gets its own SQLite file, and, when
``HERALDBENCH_TEST_POSTGRES_URL`` names a PostgreSQL server, tests taking ``database_url`` run
again on a fresh PostgreSQL database of their own.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from heraldbench.api.core.config import Settings
from heraldbench.api.core.db import forget_worker_database

POSTGRES_ENV = "HERALDBENCH_TEST_POSTGRES_URL"


@pytest.fixture(scope="package")
def dask_cluster() -> Iterator[Any]:
    """A LocalCluster (2 worker threads) for tests/api only, and a client watching it.

    Package-scoped: its scheduler and workers run in this process and touch the global
    ``random`` state, which Hypothesis tests elsewhere must not see.
    """
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            protocol="tcp",
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="package")
def dask_address(dask_cluster: Any) -> str:
    return dask_cluster.scheduler.address


def _scheduler_tasks(dask_scheduler: Any) -> int:
    return len(dask_scheduler.tasks)


def _worker_busy(dask_worker: Any) -> int:
    return len(dask_worker.state.all_running_tasks)


def _idle(dask_cluster: Any) -> bool:
    # A cancelled task leaves the scheduler at once but keeps its worker thread until it returns.
    return dask_cluster.run_on_scheduler(_scheduler_tasks) == 0 and not any(
        dask_cluster.run(_worker_busy).values()
    )


def drain(dask_cluster: Any, timeout: float = 120.0) -> None:
    """Wait until the cluster holds and runs no task (tasks must not outlive their database)."""
    from tests.api.helpers import poll

    poll(lambda: _idle(dask_cluster), timeout=timeout, interval=0.1)


def _retire(url: str, dask_cluster: Any) -> None:
    drain(dask_cluster)
    forget_worker_database(url)


def _postgres_database(server_url: str, dask_cluster: Any) -> Iterator[str]:
    """A fresh database on the server of ``server_url``, dropped afterwards."""
    import psycopg
    from sqlalchemy.engine import make_url

    server = make_url(server_url.replace("postgresql+psycopg://", "postgresql://"))
    name = f"heraldbench_test_{uuid.uuid4().hex[:10]}"
    admin = server.render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    url = server.set(drivername="postgresql+psycopg", database=name).render_as_string(
        hide_password=False
    )
    try:
        yield url
    finally:
        _retire(url, dask_cluster)  # the cluster's tasks ran in this process
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(
    request: pytest.FixtureRequest, tmp_path: Path, dask_cluster: Any
) -> Iterator[str]:
    """A real app database: a SQLite file, or a PostgreSQL database when the server is given."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'app.db'}"
        yield url
        _retire(url, dask_cluster)
        return
    server = os.environ.get(POSTGRES_ENV)
    if not server:
        pytest.skip(f"{POSTGRES_ENV} is not set")
    yield from _postgres_database(server, dask_cluster)


@pytest.fixture
def sqlite_url(tmp_path: Path, dask_cluster: Any) -> Iterator[str]:
    """A SQLite app database, for tests that need not run on both."""
    url = f"sqlite:///{tmp_path / 'app.db'}"
    yield url
    _retire(url, dask_cluster)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


@pytest.fixture
def make_settings(tmp_path: Path, dask_address: str, data_dir: Path) -> Callable[..., Settings]:
    """Settings for an app on the shared cluster; keyword arguments override."""

    def make(database_url: str, **overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "home": tmp_path / "home",
            "database_url": database_url,
            "dask_scheduler_address": dask_address,
            "track": False,
            "data_dirs": (data_dir,),
            "reconcile_seconds": 3600,
            "orphan_grace_seconds": 60,
            "api_token": None,
            "web_dir": tmp_path / "no-web",
            "trusted_hosts": ("testserver", "127.0.0.1", "localhost"),
            "mlflow_ui_port": 0,  # a free port: never another service's 5000
        }
        values.update(overrides)
        return Settings(**values)

    return make


@pytest.fixture
def serve(make_settings: Callable[..., Settings]) -> Callable[..., Any]:
    """``with serve(database_url, **settings) as client``: a TestClient with its lifespan run."""
    from fastapi.testclient import TestClient

    from heraldbench.api.main import create_app

    @contextmanager
    def open_client(database_url: str, **overrides: Any) -> Iterator[TestClient]:
        app = create_app(make_settings(database_url, **overrides))
        with TestClient(app) as client:
            yield client

    return open_client


@pytest.fixture
def api(serve: Callable[..., Any], database_url: str) -> Iterator[Any]:
    """A TestClient on the parametrised database (SQLite, and PostgreSQL when configured)."""
    with serve(database_url) as client:
        yield client


@pytest.fixture
def api_sqlite(serve: Callable[..., Any], sqlite_url: str) -> Iterator[Any]:
    """A TestClient on SQLite only."""
    with serve(sqlite_url) as client:
        yield client
