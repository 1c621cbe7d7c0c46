"""Load test of the service: N concurrent submissions against a real ``heraldbench serve``.

Run: ``python benchmarks/bench_api_load.py`` (100 submissions, all at once, SQLite) or
``python benchmarks/bench_api_load.py --database-url postgresql+psycopg://.../db --wait``.

Starts ``heraldbench serve`` on a free port with a fresh ``HERALDBENCH_HOME`` (unless ``--url``
names a running service), releases every submission at the same instant (a barrier, one thread
and one connection each), and then pages through ``GET /api/experiments`` to count what landed:
every submitted name must appear exactly once and every returned id must be listed. Reports the
latency of the POSTs (p50, p95, p99, max) and, with ``--wait``, how long the cluster took to run
them all and their final statuses. MLflow tracking is off unless ``--mlflow``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SPEC = {
    "dataset": {"kind": "synthetic-criteo", "samples": 2000, "scale": 0.001, "seed": 1},
    "cluster": {"workers": 2, "batch_size": 16},
    "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
}
TERMINAL = {"succeeded", "failed", "cancelled"}


def request(
    method: str, url: str, body: Any = None, token: str | None = None, timeout: float = 120.0
) -> tuple[int, Any]:
    """One HTTP request; returns (status, parsed JSON body)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} | (
        {"Authorization": f"Bearer {token}"} if token else {}
    )
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data, headers, method=method), timeout=timeout
        ) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(
    base: str, timeout: float = 180.0, process: subprocess.Popen | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"heraldbench serve exited with {process.returncode}")
        try:
            if request("GET", f"{base}/api/health", timeout=5)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.25)
    raise TimeoutError(f"{base} did not become healthy within {timeout} s")


@contextmanager
def serve(home: Path, env: dict[str, str] | None = None, port: int | None = None) -> Iterator[str]:
    """A ``heraldbench serve`` process (its own session, so its cluster stops with it)."""
    port = port or free_port()
    command = [
        str(Path(sys.executable).with_name("heraldbench")),
        "serve",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    environment = {
        **os.environ,
        "HERALDBENCH_HOME": str(home),
        "HERALDBENCH_DASHBOARD_ADDRESS": ":0",
        **(env or {}),
    }
    log = (home / "serve.log").open("ab")
    process = subprocess.Popen(
        command, env=environment, stdout=log, stderr=log, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, process=process)
        yield base
    finally:
        stop(process)
        log.close()


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 60.0) -> None:
    """Stop the process group of ``process`` (server and LocalCluster) with ``sig``."""
    if process.poll() is None:
        os.killpg(process.pid, sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def submit_all(
    base: str, count: int, concurrency: int, token: str | None
) -> tuple[list[dict], float]:
    """``count`` POSTs released together; each result has name, status, id, seconds."""
    prefix = f"load-{uuid.uuid4().hex[:6]}"
    barrier = threading.Barrier(min(count, concurrency))

    def post(index: int) -> dict:
        name = f"{prefix}-{index:04d}"
        if index < concurrency:
            barrier.wait()
        started = time.perf_counter()
        status, body = request("POST", f"{base}/api/experiments", {**SPEC, "name": name}, token)
        return {
            "name": name,
            "status": status,
            "id": (body or {}).get("id"),
            "seconds": time.perf_counter() - started,
        }

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(post, range(count)))
    return results, time.perf_counter() - started


def listed(base: str, token: str | None) -> list[dict]:
    """Every experiment the service lists (all pages)."""
    rows: list[dict] = []
    while True:
        _, page = request(
            "GET", f"{base}/api/experiments?limit=100&offset={len(rows)}", token=token
        )
        rows += page["data"]
        if not page["data"] or len(rows) >= page["count"]:
            return rows


def verify(results: list[dict], rows: list[dict]) -> dict[str, Any]:
    """Landed, lost and duplicated submissions."""
    names = Counter(r["name"] for r in rows)
    submitted = {r["name"] for r in results}
    accepted = [r for r in results if r["status"] == 202]
    listed_ids = {r["id"] for r in rows}
    return {
        "submitted": len(results),
        "accepted_202": len(accepted),
        "landed": sum(1 for n in submitted if names[n] >= 1),
        "lost": sum(1 for n in submitted if names[n] == 0),
        "duplicated": sum(1 for n in submitted if names[n] > 1),
        "ids_unique": len({r["id"] for r in accepted}) == len(accepted),
        "ids_listed": all(r["id"] in listed_ids for r in accepted),
    }


def wait_all(base: str, names: set[str], token: str | None, timeout: float) -> tuple[dict, float]:
    """Final statuses of the submitted experiments once all ended, and how long that took."""
    started = time.perf_counter()
    while True:
        mine = [r for r in listed(base, token) if r["name"] in names]
        if all(r["status"] in TERMINAL for r in mine) or time.perf_counter() - started > timeout:
            return dict(Counter(r["status"] for r in mine)), time.perf_counter() - started
        time.sleep(0.5)


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    cut = statistics.quantiles(ordered, n=100, method="inclusive")
    return {
        "p50_ms": cut[49] * 1e3,
        "p95_ms": cut[94] * 1e3,
        "p99_ms": cut[98] * 1e3,
        "max_ms": ordered[-1] * 1e3,
        "mean_ms": statistics.fmean(ordered) * 1e3,
    }


def run(base: str, args: argparse.Namespace) -> dict[str, Any]:
    request("POST", f"{base}/api/specs/validate", {**SPEC, "name": "warm-up"}, args.token)
    results, wall = submit_all(base, args.submissions, args.concurrency, args.token)
    report = verify(results, listed(base, args.token))
    report |= {
        "wall_s": wall,
        "submissions_per_s": len(results) / wall,
        **percentiles([r["seconds"] for r in results]),
    }
    if args.wait:
        statuses, seconds = wait_all(base, {r["name"] for r in results}, args.token, args.timeout)
        report |= {"final_statuses": statuses, "drain_s": seconds}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--url", help="a running service (default: start heraldbench serve)")
    parser.add_argument("--database-url", help="HERALDBENCH_DATABASE_URL of the started service")
    parser.add_argument("--mlflow", action="store_true", help="track runs in MLflow")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers")
    parser.add_argument("--token", help="bearer token (HERALDBENCH_API_TOKEN)")
    parser.add_argument("--wait", action="store_true", help="also wait until every experiment ran")
    parser.add_argument("--timeout", type=float, default=600.0, help="--wait gives up after this")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    if args.url:
        report = run(args.url.rstrip("/"), args)
    else:
        env = {
            "HERALDBENCH_TRACK": "true" if args.mlflow else "false",
            "HERALDBENCH_LOCAL_WORKERS": str(args.workers),
        }
        if args.database_url:
            env["HERALDBENCH_DATABASE_URL"] = args.database_url
        if args.token:
            env["HERALDBENCH_API_TOKEN"] = args.token
        with tempfile.TemporaryDirectory() as home, serve(Path(home), env) as base:
            report = run(base, args)
        report["database"] = "postgresql" if args.database_url else "sqlite"
    print(json.dumps(report, indent=1, default=str))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    ok = (
        report["lost"] == 0
        and report["duplicated"] == 0
        and report["accepted_202"] == report["submitted"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
