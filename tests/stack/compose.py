"""docker-compose.yml as the stack tests see it: read and interpolated as compose does, then
translated into processes on this machine.

The translation is the modelling assumption of the stack test, which runs each service's command
and environment from the file with only these changes:

* a service listens on the container ports it publishes (``ports``) or exposes (``expose``); here
  each of them is a free port on 127.0.0.1 (per instance), and ``0.0.0.0`` becomes ``127.0.0.1``;
* ``NAME:PORT`` naming another service becomes that service's address here; ``localhost:PORT``,
  ``127.0.0.1:PORT`` and a bare ``:PORT`` in a service's own settings mean its own port;
  ``localhost:P`` where P is a published host port means the service publishing it (the links a
  browser follows);
* services given a fixed address (PostgreSQL: the machine's server) are not started;
* every mount target is a folder of the test (a named volume is one folder shared by the services
  mounting it), and ``/app``, where the app image copies the repository, is the repository;
* programs come from this virtual environment, and ``python`` is this interpreter.
"""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "APP_DOCKERFILE",
    "COMPOSE_FILE",
    "ENV_EXAMPLE",
    "REPO",
    "InterpolationError",
    "ProcessSpec",
    "StackPlan",
    "environment",
    "interpolate",
    "listen_ports",
    "load",
    "load_raw",
    "published_ports",
    "read_env_file",
    "variables_used",
]

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
ENV_EXAMPLE = REPO / ".env.example"
APP_DOCKERFILE = "docker/app/Dockerfile"
_IMAGE_REPO_DIR = "/app"  # where docker/app/Dockerfile copies the repository
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0")

# --- reading and interpolation ---------------------------------------------------------------

_TOKEN = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[^}]*)\}|(?P<named>[A-Za-z_][A-Za-z0-9_]*))"
)
_BRACED = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>.*))?", re.DOTALL)


class InterpolationError(ValueError):
    """A ``${VAR:?message}`` whose variable is missing, or a malformed reference."""


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines of a compose ``.env`` file (comments and blank lines skipped)."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def _substitute(text: str, variables: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        if match["escaped"]:
            return "$"
        if match["named"]:
            return variables.get(match["named"], "")
        parts = _BRACED.fullmatch(match["braced"])
        if parts is None:
            raise InterpolationError(f"malformed reference ${{{match['braced']}}}")
        return _resolve(parts["name"], parts["op"], parts["arg"] or "", variables)

    return _TOKEN.sub(replace, text)


def _resolve(name: str, op: str | None, arg: str, variables: Mapping[str, str]) -> str:
    """Compose's rules: ``:-`` default, ``:?`` required, ``:+`` alternative; without the colon,
    only an unset variable (not an empty one) counts as missing."""
    value = variables.get(name)
    missing = value is None or (op is not None and op.startswith(":") and value == "")
    if op is None:
        return value or ""
    if op.endswith("-"):
        return arg if missing else value
    if op.endswith("?"):
        if missing:
            raise InterpolationError(f"{name}: {arg}")
        return value
    return "" if missing else arg  # "+"


def interpolate(node: Any, variables: Mapping[str, str]) -> Any:
    """``node`` with every string's ``${...}`` replaced (mapping keys are left alone)."""
    if isinstance(node, str):
        return _substitute(node, variables)
    if isinstance(node, list):
        return [interpolate(item, variables) for item in node]
    if isinstance(node, dict):
        return {key: interpolate(value, variables) for key, value in node.items()}
    return node


def variables_used(node: Any) -> set[str]:
    """The names of the variables the strings of ``node`` refer to."""
    if isinstance(node, str):
        found = set()
        for match in _TOKEN.finditer(node):
            if match["named"]:
                found.add(match["named"])
            elif match["braced"] is not None:
                found.add(_BRACED.match(match["braced"])["name"])
        return found
    items = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return set().union(*(variables_used(item) for item in items))


def load_raw(path: Path = COMPOSE_FILE) -> dict[str, Any]:
    """The file as YAML (merge keys resolved), before interpolation."""
    return yaml.safe_load(path.read_text())


def load(variables: Mapping[str, str], path: Path = COMPOSE_FILE) -> dict[str, Any]:
    """The file as compose uses it: interpolated with ``variables`` (what .env would hold)."""
    return interpolate(load_raw(path), variables)


# --- what a service is -------------------------------------------------------------------------


def environment(service: Mapping[str, Any]) -> dict[str, str]:
    """A service's ``environment`` as a mapping (compose allows a list of ``KEY=VALUE``)."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.partition("=")[::2] for item in env)
    return {key: "" if value is None else str(value) for key, value in env.items()}


def published_ports(service: Mapping[str, Any]) -> list[tuple[int, int]]:
    """``(host port, container port)`` of each short-syntax ``[IP:]HOST:CONTAINER`` entry."""
    pairs = []
    for entry in service.get("ports", []):
        parts = str(entry).split(":")
        if len(parts) >= 2:
            pairs.append((int(parts[-2]), int(parts[-1])))
    return pairs


def listen_ports(service: Mapping[str, Any]) -> set[int]:
    """The container ports a service listens on: those it publishes or exposes."""
    exposed = {int(str(port)) for port in service.get("expose", [])}
    return exposed | {container for _, container in published_ports(service)}


def _mounts(service: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(source, target)`` of each short-syntax volume entry."""
    return [tuple(str(entry).split(":")[:2]) for entry in service.get("volumes", [])]


def _uses_app_image(service: Mapping[str, Any]) -> bool:
    build = service.get("build")
    return isinstance(build, dict) and build.get("dockerfile") == APP_DOCKERFILE


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- translation into processes ------------------------------------------------------------------


@dataclass(frozen=True)
class ProcessSpec:
    """One instance of a service, as a process here."""

    name: str
    service: str
    argv: list[str]
    env: dict[str, str]
    health: list[str] | None
    ports: dict[int, int] = field(default_factory=dict)  # container port -> port here


_HOST_PORT = re.compile(r"(?<![\w.-])(?P<host>[A-Za-z0-9._-]+)?:(?P<port>\d+)(?!\d)")


class StackPlan:
    """Addresses and folders for running the services of ``compose`` under ``root``.

    ``fixed`` gives services that are not started their address here:
    ``{("postgres", 5432): "127.0.0.1:5432"}``.
    """

    def __init__(self, compose: dict[str, Any], fixed: dict[tuple[str, int], str], root: Path):
        self.services: dict[str, Any] = compose["services"]
        self.root = root
        self.addresses = dict(fixed)
        for name, service in self.services.items():
            for port in listen_ports(service):
                self.addresses.setdefault((name, port), f"127.0.0.1:{free_port()}")
        self.published = {
            host_port: self.addresses[(name, container)]
            for name, service in self.services.items()
            for host_port, container in published_ports(service)
        }

    def address(self, service: str, port: int) -> str:
        return self.addresses[(service, port)]

    def process(self, service: str, instance: int = 0) -> ProcessSpec:
        """One instance of ``service``; instances after the first get ports of their own."""
        config = self.services[service]
        own = {port: self.address(service, port) for port in listen_ports(config)}
        if instance > 0:
            own = {port: f"127.0.0.1:{free_port()}" for port in own}
        paths = self._paths(config)

        def translate(text: str) -> str:
            return self._translate(text, own, paths)

        test = (config.get("healthcheck") or {}).get("test") or []
        health = test if test[:1] == ["CMD"] else None  # CMD-SHELL needs the image's shell
        return ProcessSpec(
            name=f"{service}-{instance + 1}",
            service=service,
            argv=self._program([translate(a) for a in config["command"]]),
            env={key: translate(value) for key, value in environment(config).items()},
            health=self._program([translate(a) for a in health[1:]]) if health else None,
            ports={port: int(address.rsplit(":", 1)[1]) for port, address in own.items()},
        )

    def _paths(self, config: Mapping[str, Any]) -> dict[str, Path]:
        """Container path -> folder here (created)."""
        paths = {}
        for source, target in _mounts(config):
            kind = "binds" if source.startswith((".", "/")) else "volumes"
            folder = self.root / kind / re.sub(r"[^\w.-]", "_", source.strip("./") or "root")
            folder.mkdir(parents=True, exist_ok=True)
            paths[target] = folder
        if _uses_app_image(config):
            paths[_IMAGE_REPO_DIR] = REPO
        return paths

    def _translate(self, text: str, own: dict[int, str], paths: dict[str, Path]) -> str:
        if text == "0.0.0.0":
            return "127.0.0.1"
        if text.isdigit() and int(text) in own:
            return own[int(text)].rsplit(":", 1)[1]
        for target, folder in paths.items():
            if text == target or text.startswith(target + "/"):
                return str(folder) + text[len(target) :]
        return _HOST_PORT.sub(lambda match: self._address_of(match, own), text)

    def _address_of(self, match: re.Match[str], own: dict[int, str]) -> str:
        host, port = match["host"], int(match["port"])
        if host in self.services and (host, port) in self.addresses:
            return self.addresses[(host, port)]
        if (host is None or host in _LOCAL_HOSTS) and port in own:
            return own[port]
        if host in _LOCAL_HOSTS[:2] and port in self.published:
            return self.published[port]
        return match[0]

    @staticmethod
    def _program(argv: list[str]) -> list[str]:
        """The program from this virtual environment (``python``: this interpreter)."""
        program, *rest = argv
        if program == "python":
            return [sys.executable, *rest]
        local = Path(sys.executable).with_name(program)
        return [str(local) if local.exists() else program, *rest]
