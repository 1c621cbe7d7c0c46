"""Starting, checking and stopping the stack's processes, leaving none behind.

Each process starts in a session of its own (its process group), so that stopping it, or killing
it as a dead container would be, reaches the children it starts (the MLflow server's uvicorn
workers, the Dask nanny's worker). Every descendant seen is remembered, so a child that left the
group is stopped too and a leak can be reported.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil  # a dependency of distributed
from tests.stack.compose import ProcessSpec

__all__ = ["Started", "kill", "start", "stop", "wait_healthy"]

#: Variables that configure the services; the test's own are dropped so that only the compose
#: file's environment reaches them, as in a container.
_SERVICE_PREFIXES = ("HERALDBENCH_", "MLFLOW_", "DASK_")


@dataclass
class Started:
    spec: ProcessSpec
    popen: subprocess.Popen
    log: Path
    #: The process and every descendant seen, by pid (psutil refuses a reused pid).
    seen: dict[int, psutil.Process] = field(default_factory=dict)

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def remember_children(self) -> None:
        try:
            parent = psutil.Process(self.popen.pid)
            for process in (parent, *parent.children(recursive=True)):
                self.seen.setdefault(process.pid, process)
        except psutil.NoSuchProcess:
            pass

    def log_tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace").splitlines()[-lines:]
        return f"--- {self.spec.name} ({self.log}) ---\n" + "\n".join(text)

    def listening_ports(self) -> set[int]:
        """The TCP ports this process and its descendants listen on."""
        self.remember_children()
        ports = set()
        for process in self.seen.values():
            try:
                connections = process.net_connections(kind="tcp")
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            ports |= {c.laddr.port for c in connections if c.status == psutil.CONN_LISTEN}
        return ports


def _environment(spec: ProcessSpec) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(_SERVICE_PREFIXES)}
    return {**inherited, **spec.env}


def start(spec: ProcessSpec, folder: Path) -> Started:
    """Start ``spec`` in ``folder/<name>`` (its working directory), logging to ``<name>.log``."""
    workdir = folder / spec.name
    workdir.mkdir(parents=True, exist_ok=True)
    log = folder / f"{spec.name}.log"
    with log.open("ab") as sink:  # the child keeps its own descriptor
        popen = subprocess.Popen(
            spec.argv,
            cwd=workdir,
            env=_environment(spec),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Started(spec, popen, log)


def wait_healthy(started: Started, timeout: float = 120.0) -> None:
    """Run the service's own health check until it passes; fail early if the process exits."""
    assert started.spec.health, f"{started.spec.name} has no health check"
    deadline = time.monotonic() + timeout
    while True:
        started.remember_children()
        if not started.alive:
            raise AssertionError(f"{started.spec.name} exited\n{started.log_tail()}")
        check = subprocess.run(
            started.spec.health,
            env=_environment(started.spec),
            capture_output=True,
            timeout=30,
            check=False,
        )
        if check.returncode == 0:
            started.remember_children()
            return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{started.spec.name} not healthy in {timeout} s: "
                f"{check.stderr.decode(errors='replace')[-500:]}\n{started.log_tail()}"
            )
        time.sleep(0.5)


def _signal_group(started: Started, sig: signal.Signals) -> None:
    try:
        os.killpg(started.popen.pid, sig)
    except ProcessLookupError:
        pass


def kill(started: Started) -> None:
    """SIGKILL the whole process group at once, as when a container dies."""
    started.remember_children()
    _signal_group(started, signal.SIGKILL)
    started.popen.wait(timeout=30)


def stop(started: Started, grace: float = 15.0) -> list[int]:
    """SIGTERM the group, SIGKILL whatever is left after ``grace`` s; returns leaked pids."""
    started.remember_children()
    _signal_group(started, signal.SIGTERM)
    try:
        started.popen.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(started, signal.SIGKILL)
    started.popen.wait(timeout=30)
    return _reap([p for pid, p in started.seen.items() if pid != started.popen.pid])


def _reap(processes: list[psutil.Process]) -> list[int]:
    """Kill those of ``processes`` still alive (children that left the group); returns the pids
    of any that survive."""
    leftovers = []
    for process in processes:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            process.kill()
            process.wait(timeout=10)
        except psutil.NoSuchProcess:
            continue
        except psutil.TimeoutExpired:
            leftovers.append(process.pid)
    return leftovers
