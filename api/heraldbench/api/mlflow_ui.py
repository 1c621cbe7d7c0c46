"""MLflow's UI, served with the service on the embedded defaults, so that its links open.

With a local tracking store (SQLite under ``$HERALDBENCH_HOME``) and no
``HERALDBENCH_MLFLOW_UI_URL``, ``heraldbench serve`` starts ``mlflow server`` on that store as its
own child process, on loopback (``HERALDBENCH_MLFLOW_UI_PORT``, default 5000; another free port
when that one is taken, 0 for any), and stops it on shutdown. ``/api/config``'s ``mlflow_ui_url``
and every MLflow link the UI shows point there. ``HERALDBENCH_SERVE_MLFLOW=false`` turns it off.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

from heraldbench.api.core.config import Settings

__all__ = ["MlflowUI", "planned_ui"]

logger = logging.getLogger("heraldbench.api")
_HOST = "127.0.0.1"


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
    """An ``mlflow server`` child process on the service's tracking store."""

    def __init__(self, uri: str, port: int, artifacts: Path) -> None:
        self.uri, self.port, self.artifacts = uri, port, artifacts
        self.url = f"http://{_HOST}:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server (it answers a few seconds later); a failure is logged, not raised."""
        command = [
            sys.executable, "-m", "mlflow", "server", "--backend-store-uri", self.uri,
            "--artifacts-destination", self.artifacts.as_uri(), "--host", _HOST,
            "--port", str(self.port), "--workers", "1",
        ]  # fmt: skip
        log = self.artifacts.parent / "mlflow-ui.log"
        try:
            self.artifacts.mkdir(parents=True, exist_ok=True)
            with log.open("ab") as stream:
                self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and args
                    command,
                    stdout=stream,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # its workers are stopped with it, as one group
                    env={**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"},
                )
            logger.info("MLflow UI at %s (log: %s)", self.url, log)
        except OSError as exc:
            logger.warning("could not start the MLflow UI (%s): %s", " ".join(command), exc)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server and the workers it started (its own process group)."""
        process, self.process = self.process, None
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
    return MlflowUI(uri, _free_port(settings.mlflow_ui_port), settings.home_dir / "mlartifacts")
