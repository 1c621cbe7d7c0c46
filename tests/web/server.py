"""Start the real heraldbench service (``create_app``) on a free localhost port, for browser tests.

The app runs under uvicorn in a subprocess with its own temporary SQLite database, MLflow store
and a LocalCluster of threads (the service starts one when ``DASK_SCHEDULER_ADDRESS`` is unset),
so nothing is shared with other tests and nothing outlives the context.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class RunningApp:
    url: str
    token: str | None
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/health", timeout=2) as response:
            return json.load(response).get("status") == "ok"
    except (OSError, urllib.error.URLError, ValueError):
        return False


@contextmanager
def running_app(
    folder: Path, *, token: str | None = None, timeout: float = 120.0
) -> Iterator[RunningApp]:
    """The service on ``http://127.0.0.1:PORT`` until the context exits."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data").mkdir(exist_ok=True)
    port = free_port()
    env = {
        **os.environ,
        "HERALDBENCH_HOME": str(folder / "home"),
        "HERALDBENCH_DATABASE_URL": f"sqlite:///{folder / 'app.db'}",
        "MLFLOW_TRACKING_URI": f"sqlite:///{folder / 'mlflow.db'}",
        "HERALDBENCH_OPTUNA_STORAGE": f"sqlite:///{folder / 'optuna.db'}",
        "HERALDBENCH_DATA_DIRS": str(folder / "data"),
        "HERALDBENCH_LOCAL_WORKERS": "2",
        "HERALDBENCH_LOCAL_PROCESSES": "false",
        "HERALDBENCH_DASHBOARD_ADDRESS": "127.0.0.1:0",
        "HERALDBENCH_MLFLOW_UI_PORT": "0",
        "HERALDBENCH_WEB_DIR": str(ROOT / "web"),
        "HERALDBENCH_API_TOKEN": token or "",
        "PYTHONUNBUFFERED": "1",
    }
    for name in (
        "DASK_SCHEDULER_ADDRESS",
        "HERALDBENCH_PROTECT_READS",
        "HERALDBENCH_MLFLOW_UI_URL",
    ):
        env.pop(name, None)
    log = folder / "server.log"
    command = [sys.executable, "-m", "uvicorn", "--factory", "heraldbench.api.main:create_app",
               "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    app = RunningApp(f"http://127.0.0.1:{port}", token, log)
    try:
        deadline = time.monotonic() + timeout
        while not _healthy(app.url):
            if process.poll() is not None:
                raise RuntimeError(
                    f"the service exited with {process.returncode}:\n{app.log_tail()}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the service did not start within {timeout} s:\n{app.log_tail()}"
                )
            time.sleep(0.25)
        yield app
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
