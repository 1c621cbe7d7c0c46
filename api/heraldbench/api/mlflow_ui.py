"""MLflow's UI, served with the service on the embedded defaults, so that its links open.

With a local tracking store (SQLite under ``$HERALDBENCH_HOME``) and no
``HERALDBENCH_MLFLOW_UI_URL``, ``heraldbench serve`` starts MLflow's server on that store as a
child process (``heraldbench.api.mlflow_child``), on loopback (``HERALDBENCH_MLFLOW_UI_PORT``,
default 5000; another free port when that one is taken, 0 for any), and stops it on shutdown:

* **read-only, behind the token**: the server hosts MLflow's app through the
  ``heraldbench-readonly`` entry point (mlflow_app.py): reads only, and the service's token on
  them under ``HERALDBENCH_PROTECT_READS``;
* **one process that does only this**: one uvicorn worker, and MLflow's job runner (for
  server-side jobs a local UI never starts) off;
* **ends with the service**, however the service ends (lifetime.py);
* **shown when it answers**: :attr:`MlflowUI.state` is ``starting`` until its ``/health``
  answers, and ``/api/config`` gives its link only from then on.

``HERALDBENCH_SERVE_MLFLOW=false`` turns it off.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress
from pathlib import Path
from typing import Literal

from heraldbench.api.core.config import Settings
from heraldbench.api.lifetime import PARENT_ENV
from heraldbench.api.mlflow_app import PROTECT_ENV, TOKEN_ENV

__all__ = ["MlflowUI", "planned_ui"]

logger = logging.getLogger("heraldbench.api")
_HOST = "127.0.0.1"
#: How long the UI may take to answer before it is reported as failed.
_START_TIMEOUT_S = 120.0
State = Literal["stopped", "starting", "ready", "failed"]


def _free_port(preferred: int) -> int:
    """``preferred`` if nothing listens there, else a free port the OS picks."""
    for port in (preferred, 0) if preferred else (0,):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((_HOST, port))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise OSError("no free port for the MLflow UI")


class MlflowUI:
    """MLflow's server on the service's tracking store, as a child process (module docstring)."""

    def __init__(self, uri: str, port: int, artifacts: Path, token: str | None = None,
                 protect_reads: bool = False) -> None:  # fmt: skip
        self.uri, self.port, self.artifacts = uri, port, artifacts
        self.token, self.protect_reads = token, protect_reads
        self.url = f"http://{_HOST}:{port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.state: State = "stopped"
        self.started_at: float | None = None
        self.start_seconds: float | None = None  # from start() to the first answer

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "heraldbench.api.mlflow_child", "--backend-store-uri", self.uri,
            "--artifacts-destination", self.artifacts.as_uri(), "--host", _HOST,
            "--port", str(self.port), "--workers", "1", "--app-name", "heraldbench-readonly",
        ]  # fmt: skip

    def _environment(self) -> dict[str, str]:
        env = {
            **os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", PARENT_ENV: str(os.getpid()),
            "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
            PROTECT_ENV: "true" if self.protect_reads else "false",
        }  # fmt: skip
        env.pop(TOKEN_ENV, None)
        if self.token:
            env[TOKEN_ENV] = self.token
        return env

    def start(self) -> None:
        """Start the server (it answers seconds later: :meth:`wait_ready`); a failure is
        logged, not raised."""
        log = self.artifacts.parent / "mlflow-ui.log"
        try:
            self.artifacts.mkdir(parents=True, exist_ok=True)
            with log.open("ab") as stream:
                self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and args
                    self.command(), stdout=stream, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, env=self._environment(),
                    start_new_session=True,  # stopped with its children, as one group
                )  # fmt: skip
            self.state, self.started_at = "starting", time.monotonic()
            logger.info("MLflow UI starting at %s (log: %s)", self.url, log)
        except OSError as exc:
            self.state = "failed"
            logger.warning("could not start the MLflow UI (%s): %s", " ".join(self.command()), exc)

    async def wait_ready(self, interval: float = 0.2) -> None:
        """Poll ``/health`` until the server answers (``ready``), exits or times out
        (``failed``)."""
        deadline = time.monotonic() + _START_TIMEOUT_S
        while self.state == "starting":
            if self.process is None or self.process.poll() is not None:
                self.state = "failed"
            elif await asyncio.to_thread(self._answers):
                self.state = "ready"
                self.start_seconds = time.monotonic() - (self.started_at or time.monotonic())
                logger.info("MLflow UI answers at %s (%.1f s)", self.url, self.start_seconds)
            elif time.monotonic() > deadline:
                self.state = "failed"
            else:
                await asyncio.sleep(interval)
        if self.state == "failed":
            logger.warning("the MLflow UI at %s did not start; see mlflow-ui.log", self.url)

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=1) as response:  # noqa: S310
                return response.status == 200
        except OSError:
            return False

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server and the processes it started (its own process group)."""
        process, self.process = self.process, None
        self.state = "stopped"
        if process is None or process.poll() is not None:
            return
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def planned_ui(settings: Settings) -> MlflowUI | None:
    """The MLflow UI the service should serve itself, or None (a server is configured, a UI
    address is given, tracking is off, or ``HERALDBENCH_SERVE_MLFLOW`` is false)."""
    uri = settings.resolved_tracking_uri
    if not settings.serve_mlflow or settings.mlflow_ui_url or uri is None:
        return None
    if not uri.startswith("sqlite:"):
        return None
    token = settings.api_token.get_secret_value() if settings.api_token else None
    return MlflowUI(uri, _free_port(settings.mlflow_ui_port), settings.home_dir / "mlartifacts",
                    token=token, protect_reads=settings.protect_reads)  # fmt: skip
