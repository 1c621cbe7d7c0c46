"""The stack as processes: the compose file's services on this machine's PostgreSQL.

PostgreSQL is the machine's server (``HERALDBENCH_TEST_POSTGRES_URL``, else 127.0.0.1:5432 as
user postgres); the stack tests are skipped only when none answers. The test creates the app
database as the postgres image would (``POSTGRES_DB``), runs the compose file's init script for
MLflow's and Optuna's, and drops all three afterwards. Then ``mlflow server``, ``dask scheduler``,
the Dask workers (as many as ``deploy.replicas``) and ``heraldbench serve`` start in the order of
their ``depends_on``, each once its dependencies pass their own health checks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import URL, make_url
from tests.api.conftest import POSTGRES_ENV
from tests.stack.compose import ENV_EXAMPLE, REPO, StackPlan, load, read_env_file
from tests.stack.processes import Started, start, stop, wait_healthy

DEFAULT_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
INIT_SCRIPT = REPO / "docker" / "postgres" / "initdb" / "10-create-databases.sh"
#: The compose services started here; postgres is the machine's server and the GPU worker needs
#: a GPU (its command is validated offline).
STARTED = ("mlflow", "dask-scheduler", "dask-worker", "api")
FIXED = ("postgres",)
#: Passed as POSTGRES_PASSWORD when the server's URL has none: a trust-auth server ignores it.
_UNUSED_PASSWORD = "unused-under-trust-auth"


@dataclass
class Stack:
    plan: StackPlan
    processes: dict[str, Started]
    databases: dict[str, str]  # "app" | "mlflow" | "optuna" -> database name
    server: URL
    root: Path

    @property
    def api_url(self) -> str:
        return f"http://{self.plan.address('api', 8000)}"

    @property
    def mlflow_url(self) -> str:
        return f"http://{self.plan.address('mlflow', 5000)}"

    @property
    def artifacts(self) -> Path:
        return self.root / "volumes" / "mlartifacts"

    def workers(self) -> list[Started]:
        return [p for p in self.processes.values() if p.spec.service == "dask-worker" and p.alive]

    def conninfo(self, role: str) -> str:
        """A psycopg connection string for one of the test's databases."""
        url = self.server.set(drivername="postgresql", database=self.databases[role])
        return url.render_as_string(hide_password=False)

    def logs(self) -> str:
        return "\n".join(p.log_tail() for p in self.processes.values())


def _server_url() -> URL:
    return make_url(os.environ.get(POSTGRES_ENV) or DEFAULT_SERVER)


def _admin(server: URL) -> str:
    return server.set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(scope="package")
def postgres_server() -> URL:
    """The machine's PostgreSQL server; skips the stack tests when none answers."""
    import psycopg

    server = _server_url()
    try:
        with psycopg.connect(_admin(server), connect_timeout=5) as connection:
            connection.execute("SELECT 1")
    except psycopg.OperationalError as exc:
        pytest.skip(f"no PostgreSQL server reachable at {server.host}:{server.port}: {exc}")
    return server


@contextmanager
def _databases(server: URL) -> Iterator[dict[str, str]]:
    """The app database (as the postgres image creates POSTGRES_DB), then the init script's."""
    import psycopg

    stem = f"hb_stack_{uuid.uuid4().hex[:10]}"
    names = {role: f"{stem}_{role}" for role in ("app", "mlflow", "optuna")}
    try:
        with psycopg.connect(_admin(server), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{names["app"]}"')
        _run_init_script(server, names)
        yield names
    finally:
        with psycopg.connect(_admin(server), autocommit=True) as connection:
            for name in names.values():
                connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _run_init_script(server: URL, names: dict[str, str]) -> None:
    if shutil.which("psql") is None:
        pytest.fail("psql (postgresql-client) is needed to run docker/postgres/initdb")
    env = {
        **os.environ,
        "PGHOST": server.host or "127.0.0.1",
        "PGPORT": str(server.port or 5432),
        "POSTGRES_USER": server.username or "postgres",
        "POSTGRES_DB": names["app"],
        "MLFLOW_DB": names["mlflow"],
        "OPTUNA_DB": names["optuna"],
    }
    if server.password:
        env["PGPASSWORD"] = server.password
    done = subprocess.run(
        ["sh", str(INIT_SCRIPT)], env=env, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")


def compose_variables(server: URL, names: dict[str, str]) -> dict[str, str]:
    """What .env would hold: .env.example with the test server's credentials and databases."""
    return {
        **read_env_file(ENV_EXAMPLE),
        "POSTGRES_USER": server.username or "postgres",
        "POSTGRES_PASSWORD": server.password or _UNUSED_PASSWORD,
        "POSTGRES_DB": names["app"],
        "MLFLOW_DB": names["mlflow"],
        "OPTUNA_DB": names["optuna"],
    }


def _waves(services: dict[str, Any]) -> list[list[str]]:
    """STARTED in waves: each service after every service it depends on."""
    ready, waves, waiting = set(FIXED), [], list(STARTED)
    while waiting:
        wave = [s for s in waiting if set(services[s].get("depends_on", {})) <= ready]
        assert wave, f"depends_on cannot be satisfied: {waiting}"
        waves.append(wave)
        ready.update(wave)
        waiting = [s for s in waiting if s not in wave]
    return waves


def _start_all(plan: StackPlan, logs: Path, started: dict[str, Started]) -> None:
    for wave in _waves(plan.services):
        batch = []
        for service in wave:
            replicas = plan.services[service].get("deploy", {}).get("replicas", 1)
            for instance in range(replicas):
                process = start(plan.process(service, instance), logs)
                started[process.spec.name] = process
                batch.append(process)
        for process in batch:
            wait_healthy(process, timeout=180)


def _stop_all(started: dict[str, Started]) -> list[int]:
    """Stop in the reverse order of starting (the API closes its Dask client first)."""
    leaked = []
    for process in reversed(list(started.values())):
        leaked += stop(process)
    return leaked


@pytest.fixture(scope="module")
def stack(postgres_server: URL, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The compose stack running as processes; everything started is stopped afterwards."""
    root = tmp_path_factory.mktemp("stack")
    started: dict[str, Started] = {}
    with _databases(postgres_server) as names:
        compose = load(compose_variables(postgres_server, names))
        host, port = postgres_server.host or "127.0.0.1", postgres_server.port or 5432
        plan = StackPlan(compose, fixed={("postgres", 5432): f"{host}:{port}"}, root=root)
        try:
            _start_all(plan, root / "logs", started)
            yield Stack(plan, started, names, postgres_server, root)
        finally:
            leaked = _stop_all(started)
    assert not leaked, f"processes left running: {leaked}"
