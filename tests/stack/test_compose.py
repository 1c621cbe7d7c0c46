"""docker-compose.yml checked offline (there is no Docker engine on these machines).

The file must validate against the Compose Specification's JSON schema (vendored beside this
file), once interpolated with .env.example as compose interpolates it; every command must parse
with the programs this project installs; every setting the app reads must be set; and the wiring
the services rely on (host names, ports, health checks, databases, MLflow's Host check) must hold.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import re
import tomllib
import warnings
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
from tests.stack.compose import (
    APP_DOCKERFILE,
    COMPOSE_FILE,
    ENV_EXAMPLE,
    REPO,
    InterpolationError,
    environment,
    listen_ports,
    load,
    load_raw,
    read_env_file,
    variables_used,
)

from heraldbench.api.core.config import Settings
from heraldbench.pipelines.cluster import SCHEDULER_ENV
from heraldbench.pipelines.tracking import HOME_ENV, URI_ENV

SCHEMA = Path(__file__).with_name("compose-spec.json")
APP_SERVICES = ("api", "dask-scheduler", "dask-worker")
WORKERS = ("dask-worker", "dask-worker-gpu")
#: Settings left at their defaults in the stack: they configure the LocalCluster the service
#: starts only when DASK_SCHEDULER_ADDRESS is unset, and the stack sets it.
LOCAL_CLUSTER_ONLY = {
    "HERALDBENCH_LOCAL_WORKERS",
    "HERALDBENCH_LOCAL_PROCESSES",
    "HERALDBENCH_DASHBOARD_ADDRESS",
}
#: What code on a worker reads from its environment (the rest comes with the task); the tuning
#: pipeline's driver, which runs on a worker, reads the Optuna storage and whether to track.
WORKER_SETTINGS = {
    URI_ENV,
    HOME_ENV,
    SCHEDULER_ENV,
    "HERALDBENCH_OPTUNA_STORAGE",
    "HERALDBENCH_TRACK",
}


@pytest.fixture(scope="module", params=["env-example", "file-defaults"])
def compose(request: pytest.FixtureRequest) -> dict:
    """The file as compose reads it with .env copied from .env.example, and with a .env that
    sets only the password (every other value from the file's own defaults)."""
    variables = read_env_file(ENV_EXAMPLE) if request.param == "env-example" else {}
    return load({**variables, "POSTGRES_PASSWORD": "s3cret"})


@pytest.fixture(scope="module")
def services(compose: dict) -> dict:
    return compose["services"]


def _schema_errors(document: dict) -> list[str]:
    validator = jsonschema.Draft201909Validator(json.loads(SCHEMA.read_text()))  # its $schema
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(document)
    ]


def test_the_file_validates_against_the_compose_specification(compose: dict) -> None:
    assert _schema_errors(compose) == []
    broken = copy.deepcopy(compose)  # the schema does reject what compose would
    broken["services"]["api"]["depends_on"]["mlflow"]["condition"] = "service_healty"
    broken["services"]["dask-worker"]["deploy"]["replicas"] = "two"
    broken["services"]["mlflow"]["helthcheck"] = {}
    assert len(_schema_errors(broken)) == 3


def test_compose_refuses_to_start_without_a_password() -> None:
    variables = read_env_file(ENV_EXAMPLE)
    assert variables["POSTGRES_PASSWORD"] == ""  # no secret in the example
    with pytest.raises(InterpolationError, match="set POSTGRES_PASSWORD in .env"):
        load(variables)


#: Variables .env.example sets for compose itself rather than for the file.
COMPOSE_OWN = {"COMPOSE_PROJECT_NAME"}


def test_every_variable_the_file_reads_is_documented_in_env_example() -> None:
    assert variables_used(load_raw()) | COMPOSE_OWN == set(read_env_file(ENV_EXAMPLE))


def test_the_project_is_named_in_env_example_not_in_the_file() -> None:
    """docker-compose 1.29 refuses a top-level `name:`; both it and the v2 plugin read
    COMPOSE_PROJECT_NAME from .env, so the volumes are heraldbench_* whatever the folder."""
    assert "name" not in load_raw()
    assert read_env_file(ENV_EXAMPLE)["COMPOSE_PROJECT_NAME"] == "heraldbench"


def test_env_example_states_the_defaults_of_the_file() -> None:
    defaults: dict[str, set[str]] = {}
    for name, default in re.findall(r"\$\{(\w+):-([^}]*)\}", COMPOSE_FILE.read_text()):
        defaults.setdefault(name, set()).add(default)
    example = read_env_file(ENV_EXAMPLE)
    assert {name: {example[name]} for name in defaults} == defaults


def test_no_secret_is_written_in_the_file(compose: dict) -> None:
    for service in load_raw()["services"].values():
        for name, value in environment(service).items():
            if re.search("PASSWORD|TOKEN|SECRET", name):
                assert re.fullmatch(r"\$\{[^}]*\}", value), f"{name} is written in the file"
    passwords = re.findall(r"://[^:/@\s]+:([^@\s]+)@", json.dumps(compose))
    assert passwords and set(passwords) == {"s3cret"}  # every URL's comes from .env


def _click_command(argv: list[str]) -> tuple[Any, list[str]]:
    """The installed click command that ``argv`` runs, and its arguments."""
    program, *args = argv
    if program == "dask":  # subcommands are entry points of distributed
        (entry,) = entry_points(group="dask_cli", name=args[0])
        return entry.load(), args[1:]
    if program == "mlflow":
        with warnings.catch_warnings():  # mlflow.cli warns about its own type hints
            warnings.simplefilter("ignore", UserWarning)
            from mlflow.cli import cli as command
    elif program == "heraldbench":
        import typer

        from heraldbench.api.cli import app

        command = typer.main.get_command(app)
    else:
        raise AssertionError(f"{program} is not a program the project installs")
    while args and args[0] in getattr(command, "commands", {}):  # typer vendors its own click
        command = command.commands[args.pop(0)]
    return command, args


def _parse(argv: list[str]) -> dict:
    command, args = _click_command(argv)
    return command.make_context(" ".join(argv[:2]), list(args)).params


@pytest.mark.parametrize(
    "service", ["mlflow", "dask-scheduler", "dask-worker", "dask-worker-gpu", "api"]
)
def test_every_command_parses_with_the_installed_programs(services: dict, service: str) -> None:
    params = _parse(services[service]["command"])  # a typo or a bad value raises here
    test = services[service]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    compile(test[3], f"{service} health check", "exec")
    assert "host" in params or "scheduler" in params  # where it listens, or what it joins


def test_the_api_and_workers_get_every_setting_the_app_reads(services: dict) -> None:
    settings = {field.validation_alias.choices[0] for field in Settings.model_fields.values()}
    read_by_api = (settings - LOCAL_CLUSTER_ONLY) | WORKER_SETTINGS
    assert read_by_api - set(environment(services["api"])) == set()
    for worker in WORKERS:
        assert WORKER_SETTINGS - set(environment(services[worker])) == set()
    assert LOCAL_CLUSTER_ONLY <= settings  # the exemptions name real settings


def _references(service: dict) -> set[tuple[str, int]]:
    """``(host, port)`` named in a service's environment and command."""
    texts = [*environment(service).values(), *map(str, service.get("command", []))]
    return {
        (host, int(port))
        for text in texts
        for host, port in re.findall(r"(?<![\w.-])([a-z][\w.-]*):(\d+)\b", text)
        if host != "localhost"
    }


def test_services_reach_each_other_only_once_healthy(services: dict) -> None:
    for name, service in services.items():
        for host, port in _references(service):
            if host == name:
                continue
            assert host in services, f"{name} names {host}, which is no service"
            assert port in listen_ports(services[host]), f"{name}: {host} listens not on {port}"
            condition = service.get("depends_on", {}).get(host, {}).get("condition")
            assert condition == "service_healthy", f"{name} must wait for {host} to be healthy"
            assert "healthcheck" in services[host]


def test_mlflow_admits_the_host_its_clients_use_and_proxies_artifacts(services: dict) -> None:
    params = _parse(services["mlflow"]["command"])
    allowed = params["allowed_hosts"].split(",")
    for worker in ("api", *WORKERS):
        netloc = urlsplit(environment(services[worker])[URI_ENV]).netloc
        assert any(fnmatch.fnmatch(netloc, pattern) for pattern in allowed), netloc
    assert any(fnmatch.fnmatch("localhost:5000", pattern) for pattern in allowed)  # a browser
    assert params["serve_artifacts"] is True
    mounts = {
        target: source
        for source, target, *_ in (v.split(":") for v in services["mlflow"]["volumes"])
    }
    assert mounts[params["artifacts_destination"]] == "mlartifacts"  # a named volume


def test_the_app_mlflow_and_optuna_have_databases_of_their_own(services: dict) -> None:
    api = environment(services["api"])
    urls = [
        api["HERALDBENCH_DATABASE_URL"],
        api["HERALDBENCH_OPTUNA_STORAGE"],
        environment(services["mlflow"])["MLFLOW_BACKEND_STORE_URI"],
    ]
    parts = [urlsplit(url) for url in urls]
    assert {p.netloc for p in parts} == {parts[0].netloc}  # one server
    assert len({p.path for p in parts}) == 3  # three databases
    postgres = environment(services["postgres"])
    created = {postgres["POSTGRES_DB"], postgres["MLFLOW_DB"], postgres["OPTUNA_DB"]}
    assert {p.path.lstrip("/") for p in parts} == created
    init = [v for v in services["postgres"]["volumes"] if "docker-entrypoint-initdb.d" in v]
    assert init == ["./docker/postgres/initdb:/docker-entrypoint-initdb.d:ro"]


def test_one_app_image_runs_the_api_the_scheduler_and_the_workers(services: dict) -> None:
    builds = {json.dumps(services[s]["build"], sort_keys=True) for s in APP_SERVICES}
    images = {services[s]["image"] for s in APP_SERVICES}
    assert len(builds) == 1 and len(images) == 1
    assert services["api"]["build"]["dockerfile"] == APP_DOCKERFILE
    gpu = services["dask-worker-gpu"]["build"]
    assert gpu["dockerfile"] == APP_DOCKERFILE and gpu["args"]["TORCH_INDEX_URL"] == ""
    # The GPU image starts from the plain Python base, never the CPU app's (which may carry the
    # CPU build of torch, which would satisfy the pin and leave the GPU worker without CUDA).
    assert gpu["args"]["PYTHON_IMAGE"] == services["mlflow"]["build"]["args"]["PYTHON_IMAGE"]


def test_the_defaults_pull_the_official_images_and_pytorchs_cpu_index() -> None:
    services = load({"POSTGRES_PASSWORD": "s3cret"})["services"]
    assert services["postgres"]["image"] == "postgres:16"
    app, mlflow = services["api"]["build"]["args"], services["mlflow"]["build"]["args"]
    assert app == {
        "PYTHON_IMAGE": "python:3.11-slim",
        "TORCH_INDEX_URL": "https://download.pytorch.org/whl/cpu",
    }
    assert mlflow == {"PYTHON_IMAGE": "python:3.11-slim"}
    for dockerfile in (REPO / APP_DOCKERFILE, REPO / "docker" / "mlflow" / "Dockerfile"):
        text = dockerfile.read_text()
        assert re.search(
            r"^ARG PYTHON_IMAGE=python:3\.11-slim\nFROM \$\{PYTHON_IMAGE\}$", text, re.MULTILINE
        )


def test_cpu_workers_scale_and_the_gpu_worker_is_an_optional_profile(services: dict) -> None:
    cpu, gpu = services["dask-worker"], services["dask-worker-gpu"]
    assert "container_name" not in cpu and "ports" not in cpu  # --scale needs neither
    assert cpu["deploy"]["replicas"] == 2 and "profiles" not in cpu
    assert _parse(cpu["command"])["resources"] is None
    assert gpu["profiles"] == ["gpu"]
    assert _parse(gpu["command"])["resources"] == "GPU=1"
    (device,) = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert device == {"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}


def test_state_lives_in_declared_named_volumes(compose: dict) -> None:
    declared = set(compose["volumes"])
    used = {
        entry.split(":")[0]
        for service in compose["services"].values()
        for entry in service.get("volumes", [])
        if not entry.startswith((".", "/"))
    }
    assert used == declared == {"pgdata", "mlartifacts", "heraldbench-home"}


def _pin(requirements: list[str], name: str) -> str:
    (pin,) = [r.split("#")[0].strip() for r in requirements if re.match(rf"{name}\s*==", r)]
    return pin


def test_the_images_install_what_the_project_pins() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    dependencies = project["dependencies"]
    mlflow_image = (REPO / "docker" / "mlflow" / "requirements.txt").read_text().splitlines()
    assert _pin(mlflow_image, "mlflow") == _pin(dependencies, "mlflow")  # server = clients
    app_image = (REPO / APP_DOCKERFILE).read_text()
    assert f" {_pin(dependencies, 'torch')}\n" in app_image
    assert re.search(
        r"^ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu$", app_image, re.MULTILINE
    )
    assert project["requires-python"] == ">=3.11"
