"""The MLflow UI ``heraldbench serve`` starts: shown once it answers, read-only, behind the
service's token, and gone with the service however it ends (a real ``serve`` process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
from benchmarks.bench_api_load import free_port, request, stop, wait_healthy

from tests.api.helpers import poll

TOKEN = "ui-t0ken"


def _serve(home: Path, port: int, ui_port: int) -> subprocess.Popen:
    env = {
        **os.environ, "HERALDBENCH_HOME": str(home), "HERALDBENCH_TRACK": "true",
        "HERALDBENCH_API_TOKEN": TOKEN, "HERALDBENCH_PROTECT_READS": "true",
        "HERALDBENCH_MLFLOW_UI_PORT": str(ui_port), "HERALDBENCH_DASHBOARD_ADDRESS": ":0",
        "HERALDBENCH_LOCAL_WORKERS": "1",
    }  # fmt: skip
    command = [str(Path(sys.executable).with_name("heraldbench")), "serve", "--port", str(port),
               "--log-level", "warning"]  # fmt: skip
    home.mkdir(parents=True, exist_ok=True)
    with (home / "serve.log").open("ab") as log:
        return subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True)


def _status(method: str, url: str, headers: dict[str, str] | None = None,
            body: bytes | None = None) -> int:  # fmt: skip
    call = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(call, timeout=10) as response:  # noqa: S310 - loopback
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def _config(base: str) -> dict:
    return request("GET", f"{base}/api/config", token=TOKEN)[1]


def test_the_ui_answers_when_shown_reads_only_and_dies_with_the_service(tmp_path: Path) -> None:
    port, ui_port = free_port(), free_port()
    process = _serve(tmp_path / "home", port, ui_port)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, process=process)
        states = []
        url = poll(lambda: states.append(_config(base)["mlflow_ui_state"])
                   or _config(base)["mlflow_ui_url"], timeout=120, interval=0.1)  # fmt: skip
        assert url == f"http://127.0.0.1:{ui_port}" and set(states) <= {"starting", "ready"}
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert _status("GET", f"{url}/", auth) == 200  # open when shown
        search = f"{url}/ajax-api/2.0/mlflow/experiments/search"
        json = {"Content-Type": "application/json"}
        assert _status("POST", search, {**auth, **json}, b'{"max_results": 5}') == 200
        # behind the token, as a header or as the cookie the web UI sets
        assert _status("GET", f"{url}/", {}) == 401
        assert _status("POST", search, json, b"{}") == 401
        assert _status("GET", f"{url}/", {"Cookie": f"heraldbench_token={TOKEN}"}) == 200
        # read-only, token or not
        create = f"{url}/api/2.0/mlflow/experiments/create"
        assert _status("POST", create, {**auth, **json}, b'{"name": "x"}') == 403
        assert _status("POST", f"{url}/api/2.0/mlflow/runs/delete", {**auth, **json}, b"{}") == 403
        children = psutil.Process(process.pid).children(recursive=True)
        assert any("mlflow_child" in " ".join(c.cmdline()) for c in children)
        os.kill(process.pid, signal.SIGKILL)  # the service alone: no clean-up runs
        process.wait(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(c.is_running() for c in children):
            time.sleep(0.2)
        left = [c.pid for c in children if c.is_running() and c.status() != "zombie"]
        assert left == [], f"processes outlived the service: {left}"
        assert _status("GET", f"{url}/health") == 0  # nothing listens on its port any more
    finally:
        stop(process, signal.SIGKILL)
