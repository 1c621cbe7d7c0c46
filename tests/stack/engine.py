"""docker-compose.yml run by a compose implementation on a container engine, for the ``stack``
tests (test_images.py).

The project gets a name of its own (``hbtest<hex>``), free host ports and an empty data folder, so
that it never touches a stack a user runs on the same engine. Base images: the official ones where
the engine has them, else the stand-ins that docker/local-images.sh built (its variables file);
the test skips, saying which, where neither is there, and never pulls.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tests.stack.compose import COMPOSE_FILE, ENV_EXAMPLE, REPO, free_port, read_env_file

LOCAL_IMAGES_ENV = REPO / "docker" / "local-images.env"
OFFICIAL_BASES = ("python:3.11-slim", "postgres:16")
#: Implementations that drive a Docker engine (the test reads containers with the docker CLI).
IMPLEMENTATIONS = (("docker", "compose"), ("docker-compose",))
#: The variable that names a compose implementation to use, e.g. "docker-compose".
COMPOSE_ENV = "HERALDBENCH_COMPOSE"


class Unavailable(Exception):
    """No engine, compose implementation or base image: the reason the tests skip."""


def _run(argv: list[str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


def engine_answers() -> None:
    if shutil.which("docker") is None:
        raise Unavailable("no docker client on PATH")
    try:
        info = _run(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=15)
    except subprocess.TimeoutExpired:
        raise Unavailable("`docker info` did not answer in 15 s") from None
    if info.returncode != 0:
        raise Unavailable(f"no container engine answers `docker info`: {info.stderr.strip()}")


def compose_command() -> list[str]:
    """HERALDBENCH_COMPOSE if set, else the first implementation installed that answers."""
    named = os.environ.get(COMPOSE_ENV)
    candidates = [named.split()] if named else [list(c) for c in IMPLEMENTATIONS]
    for argv in candidates:
        if shutil.which(argv[0]) and _run([*argv, "version"]).returncode == 0:
            return argv
    raise Unavailable(f"no compose implementation answers `version`: tried {candidates}")


def _image_exists(image: str) -> bool:
    return _run(["docker", "image", "inspect", image]).returncode == 0


def base_images() -> dict[str, str]:
    """The image variables: {} for the official images, else docker/local-images.sh's."""
    if all(_image_exists(image) for image in OFFICIAL_BASES):
        return {}
    if LOCAL_IMAGES_ENV.is_file():
        local = read_env_file(LOCAL_IMAGES_ENV)
        missing = [image for image in local.values() if not _image_exists(image)]
        if not missing:
            return local
        raise Unavailable(f"stand-in images missing: {missing}; run docker/local-images.sh")
    raise Unavailable(
        f"base images missing: pull {' and '.join(OFFICIAL_BASES)}, or build stand-ins with "
        "docker/local-images.sh"
    )


@dataclass
class Project:
    """One compose project of docker-compose.yml, with its own .env."""

    compose: list[str]
    root: Path
    name: str = field(default_factory=lambda: f"hbtest{uuid.uuid4().hex[:8]}")
    variables: dict[str, str] = field(default_factory=dict)

    def write_env(self, images: dict[str, str]) -> None:
        """.env.example with a password, free ports, an empty data folder and the images."""
        (self.root / "data").mkdir(exist_ok=True)
        self.variables = {
            **read_env_file(ENV_EXAMPLE),
            "COMPOSE_PROJECT_NAME": self.name,
            "POSTGRES_PASSWORD": uuid.uuid4().hex,
            "HERALDBENCH_DATA_DIR": str(self.root / "data"),
            **{port: str(free_port()) for port in self.PORTS},
            **images,
        }
        lines = [f"{key}={value}" for key, value in self.variables.items()]
        self.env_file.write_text("\n".join(lines) + "\n")

    PORTS = ("API_PORT", "MLFLOW_PORT", "DASK_DASHBOARD_PORT", "DASK_SCHEDULER_PORT")

    @property
    def env_file(self) -> Path:
        return self.root / "stack.env"

    def url(self, port_variable: str) -> str:
        return f"http://127.0.0.1:{self.variables[port_variable]}"

    def __call__(self, *args: str, timeout: float = 600) -> str:
        """Run compose with this project's name and .env; fail with its output on an error."""
        argv = [*self.compose, "-f", str(COMPOSE_FILE), "-p", self.name]
        argv += ["--env-file", str(self.env_file), *args]
        done = subprocess.run(
            argv, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False,
            env={**os.environ, "DOCKER_BUILDKIT": "0", "COMPOSE_DOCKER_CLI_BUILD": "0"},
        )  # fmt: skip
        assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout[-4000:]}{done.stderr[-4000:]}"
        return done.stdout

    # --- what the engine holds for this project ----------------------------------------------

    def _label(self) -> str:
        return f"label=com.docker.compose.project={self.name}"

    def containers(self, service: str | None = None, running: bool = True) -> list[dict]:
        argv = ["docker", "ps", "-q", "--filter", self._label()] + ([] if running else ["-a"])
        if service:
            argv += ["--filter", f"label=com.docker.compose.service={service}"]
        ids = _run(argv).stdout.split()
        return json.loads(_run(["docker", "inspect", *ids]).stdout) if ids else []

    def leftovers(self) -> dict[str, list[str]]:
        """Containers, volumes and networks of this project that the engine still holds."""
        kinds = {"containers": ["ps", "-aq"], "volumes": ["volume", "ls", "-q"]}
        kinds["networks"] = ["network", "ls", "-q"]
        return {k: _run(["docker", *v, "--filter", self._label()]).stdout.split()
                for k, v in kinds.items()}  # fmt: skip

    def wait_healthy(self, expected: int, timeout: float = 600) -> float:
        """Seconds until `expected` containers run and every one of them is healthy."""
        started, deadline = time.monotonic(), time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = [c["State"] for c in self.containers()]
            health = [s.get("Health", {}).get("Status") for s in states]
            if len(states) == expected and set(health) == {"healthy"}:
                return time.monotonic() - started
            time.sleep(1)
        names = {c["Name"]: c["State"].get("Health", {}).get("Status") for c in self.containers()}
        raise AssertionError(f"not all {expected} healthy in {timeout} s: {names}")

    def kill(self, container_id: str) -> bool:
        """SIGKILL to the whole container at once (nanny and worker), as a crash would."""
        return _run(["docker", "kill", container_id]).returncode == 0

    def exec(self, service: str, *argv: str) -> str:
        (container, *_) = self.containers(service)
        done = _run(["docker", "exec", container["Id"], *argv], timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def sql(self, database_variable: str, query: str) -> list:
        """Rows of a query (its JSON, one row a line), run by psql in the postgres container."""
        database = self.variables[database_variable]
        out = self.exec("postgres", "psql", "-U", self.variables["POSTGRES_USER"], "-d", database,
                        "-AtX", "-c", f"SELECT row_to_json(q) FROM ({query}) q")  # fmt: skip
        return [json.loads(line) for line in out.splitlines() if line]

    def memory_mib(self) -> dict[str, float]:
        """Each running container's memory (`docker stats`), by service-number, in MiB."""
        labels = {c["Name"].lstrip("/"): c["Config"]["Labels"] for c in self.containers()}
        names = {n: f"{v['com.docker.compose.service']}-{v['com.docker.compose.container-number']}"
                 for n, v in labels.items()}  # fmt: skip
        out = _run(["docker", "stats", "--no-stream", "--format", "{{json .}}", *labels], 60).stdout
        units = {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "B": 1 / 2**20}
        usage = {}
        for line in out.splitlines():
            stats = json.loads(line)
            used = stats["MemUsage"].split("/")[0].strip()
            unit = next(u for u in units if used.endswith(u))
            usage[names[stats["Name"]]] = round(float(used.removesuffix(unit)) * units[unit], 1)
        return dict(sorted(usage.items())) | {"total": round(sum(usage.values()), 1)}

    def logs(self) -> str:
        return self("logs", "--no-color", "--tail", "40")
