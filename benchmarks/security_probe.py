"""A probe of a real ``heraldbench serve`` as an attacker and a careless user would try it.

Run: ``python benchmarks/security_probe.py``. It starts the service on loopback (embedded
defaults, a token set, reads protected), tries every case below, and prints per area how many it
tried and how many the service handled as it should, with the slowest refusal; then kills the
service with SIGKILL and checks nothing it started survives, and damages its database to check
the degraded start. Writes ``benchmarks/results/security_probe.json``. Traffic goes to
127.0.0.1 only, a bounded number of requests.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil
from _records import write_record
from bench_api_load import free_port, wait_healthy

TOKEN = "probe-t0ken"
SECRET = "topsecret-value-42"
SPEC = {
    "name": "probe", "dataset": {"kind": "synthetic-criteo", "samples": 2000, "scale": 0.001},
    "cluster": {"workers": 2, "batch_size": 16}, "cache": {"ratio": 0.1},
    "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
}  # fmt: skip
TUNING = {"space": {"cache.policy": {"choices": ["lru", "lfu"]}}, "objectives": ["traffic"],
          "trials": 1}  # fmt: skip


def call(method: str, url: str, body: Any = None, headers: dict | None = None,
         raw: bytes | None = None) -> tuple[int, str, dict, float]:  # fmt: skip
    """(status, text, headers, seconds) of one request."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    sent = {"Content-Type": "application/json", **(headers or {})}
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, sent, method=method),
                                    timeout=30) as response:  # noqa: S310 - loopback
            status, text, got = response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        status, text, got = exc.code, exc.read().decode("utf-8", "replace"), dict(exc.headers)
    except (OSError, TimeoutError) as exc:
        status, text, got = 0, str(exc), {}
    return status, text, {k.lower(): v for k, v in got.items()}, time.perf_counter() - start


class Area:
    """Cases of one area: how many tried, handled, and the slowest answer."""

    def __init__(self, name: str) -> None:
        self.name, self.tried, self.handled, self.misses = name, 0, 0, []
        self.slowest, self.slowest_case = 0.0, ""

    def check(self, ok: bool, what: str, seconds: float = 0.0) -> None:
        self.tried += 1
        self.handled += bool(ok)
        if seconds > self.slowest:
            self.slowest, self.slowest_case = seconds, what
        if not ok:
            self.misses.append(what)

    def row(self) -> dict[str, Any]:
        return {"area": self.name, "tried": self.tried, "handled": self.handled,
                "slowest_ms": round(1000 * self.slowest, 1), "slowest": self.slowest_case,
                "misses": self.misses[:10]}  # fmt: skip


AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _declared_body(port: int, size: int) -> tuple[int, dict]:
    """The answer to a POST declaring a ``size``-byte body, read before any of it is sent (a
    server refusing it at once closes the connection under a client still sending)."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.putrequest("POST", "/api/specs/validate")
    for name, value in {**AUTH, "Content-Type": "application/json",
                        "Content-Length": str(size)}.items():  # fmt: skip
        connection.putheader(name, value)
    connection.endheaders()
    response = connection.getresponse()
    headers = {k.lower(): v for k, v in response.getheaders()}
    connection.close()
    return response.status, headers


def paths(base: str, data: Path, outside: Path) -> Area:
    area = Area("files outside the data folders, special files")
    link = data / "innocent.yaml"
    link.symlink_to(outside)
    os.mkfifo(data / "pipe")
    values = [str(outside), "../" * 12 + str(outside).lstrip("/"), str(link), outside.as_uri(),
              "/etc/passwd", "/etc/shadow", "/proc/self/status", "/dev/zero", "/", "",
              str(data / "pipe"), str(data), "a\x00b"]  # fmt: skip
    places = {
        "time_profile": lambda v: {**SPEC, "time_profile": v},
        "dataset.path": lambda v: {**SPEC, "dataset": {"kind": "criteo-tsv", "path": v}},
        "dataset.profile": lambda v: {**SPEC, "dataset": {"kind": "synthetic", "profile": v,
                                                          "samples": 1000}},
    }  # fmt: skip
    for field, make in places.items():
        for value in values:
            for endpoint in ("/api/specs/validate", "/api/experiments", "/api/studies"):
                body = make(value)
                if endpoint == "/api/studies":
                    body = {**body, "tuning": TUNING}
                status, text, _, seconds = call("POST", base + endpoint, body, AUTH)
                ok = status == 422 and SECRET not in text and "root:" not in text
                ok = ok and json.loads(text)["detail"][0]["field"] == field
                if value == str(link):  # a link: where it points is not told
                    ok = ok and str(outside) not in text
                area.check(ok, f"{endpoint} {field}={value!r}: {status}", seconds)
    for value in values:
        body = {"name": "x", "kind": "criteo-tsv", "path": value}
        status, text, _, seconds = call("POST", f"{base}/api/datasets", body, AUTH)
        area.check(status == 422 and SECRET not in text, f"datasets {value!r}: {status}", seconds)
    return area


def token(base: str) -> Area:
    area = Area("the token on every endpoint taking a body")
    wrong = [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
             {"X-API-Key": TOKEN}, {"Cookie": f"token={TOKEN}"}]  # fmt: skip
    for endpoint in ("/api/specs/validate", "/api/experiments", "/api/studies", "/api/datasets",
                     "/api/experiments/1/cancel", "/api/studies/1/cancel"):  # fmt: skip
        for headers in wrong:
            for url in (base + endpoint, f"{base}{endpoint}?token={TOKEN}"):
                status, _, _, seconds = call("POST", url, SPEC, headers)
                area.check(status == 401, f"{endpoint} {headers}: {status}", seconds)
    for endpoint in ("/api/experiments", "/api/studies", "/api/datasets", "/api/presets"):
        status, _, _, _ = call("GET", base + endpoint)
        area.check(status == 401, f"GET {endpoint} without the token: {status}")
    return area


def _places(document: Any, path: tuple = ()) -> list[tuple]:
    found = [path] if path else []
    if isinstance(document, dict):
        for key, value in document.items():
            found += _places(value, (*path, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _places(value, (*path, index))
    return found


def _set(document: Any, path: tuple, value: Any) -> Any:
    out = json.loads(json.dumps(document))
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return out


def server_errors(base: str) -> Area:
    area = Area("input that made 500s: lone surrogates, integers beyond 64 bits")
    for place in _places(SPEC):
        for value in ("\ud800", "x\udfff", 2**63, 2**70, -(2**64)):
            raw = json.dumps(_set(SPEC, place, value)).encode()
            for endpoint in ("/api/specs/validate", "/api/experiments"):
                status, text, _, seconds = call("POST", base + endpoint, raw=raw, headers=AUTH)
                field = ".".join(map(str, place))
                ok = status == 422 and json.loads(text)["detail"][0]["field"] == field
                area.check(ok, f"{endpoint} {field}={value!r}: {status}", seconds)
    for value in ("\ud800", 2**70):
        raw = json.dumps({**SPEC, "name": value}).encode()
        status, _, _, seconds = call("POST", f"{base}/api/studies", raw=raw, headers=AUTH)
        area.check(status == 422, f"studies name={value!r}: {status}", seconds)
    return area


def _profile(samples: int, **extra: Any) -> dict:
    return {"kind": "synthetic", "profile": "criteo-kaggle", "samples": samples, **extra}


BOMBS = [
    {"dataset": _profile(10**9)}, {"dataset": _profile(2**40)},
    {"dataset": _profile(2**34), "lower_bound": False,
     "cluster": {"workers": 8, "batch_size": 4096}},
    {"cache": {"rows": 2**70}}, {"cache": {"bytes": 2**80}}, {"cache": {"bytes": "1e30GiB"}},
    {"dataset": _profile(100_000, scale=1.0), "embedding_dim": 65536, "mode": "train"},
    {"schedulers": [{"kind": "bagpipe", "lookahead": 10**9}]},
    {"cache": {"ratio": [round(0.5 + i / 4000, 6) for i in range(999)] + [2.0]}},
    {"schedulers": [{"kind": "herald", "lookahead": list(range(1, 1001))}], "seeds": [1, 2]},
]  # fmt: skip
STUDY_BOMBS = [
    {"space": {"cache.bytes": {"low": "1MiB", "high": "1e30GiB"}}},
    {"space": {"cache.policy": {"choices": [f"p{i}" for i in range(16_000)]}}},
    {"sampler": {"kind": "tpe", "startup_trials": 10**9}},
    {"trials": 10**9},
]  # fmt: skip


def bombs(base: str) -> Area:
    area = Area("what would exhaust the machine, refused at submission")
    for fields in BOMBS:
        for endpoint in ("/api/specs/validate", "/api/experiments"):
            status, text, _, seconds = call("POST", base + endpoint, {**SPEC, **fields}, AUTH)
            field = json.loads(text)["detail"][0]["field"] if status == 422 else None
            area.check(status == 422, f"{endpoint} {json.dumps(fields)[:60]}: {status} "
                       f"{field}", seconds)  # fmt: skip
    samples = {**SPEC, "dataset": {"kind": "synthetic-criteo", "samples": 10**12},
               "tuning": TUNING}  # fmt: skip
    for body in [samples] + [{**SPEC, "tuning": {**TUNING, **t}} for t in STUDY_BOMBS]:
        status, _, _, seconds = call("POST", f"{base}/api/studies", body, AUTH)
        area.check(status == 422, f"studies {list(body.get('tuning', {}))}: {status}", seconds)
    return area


def http(base: str, port: int) -> Area:
    area = Area("hosts, origins, content types, headers")
    for host in ("localhost:evil.com", "evil.com", "127.0.0.1.evil.com", "localhost:80:80",
                 "user@localhost", "[::1]:x", "localhost:99999", "LOCALHOST.", "0x7f000001",
                 "2130706433", "localhost/x", "evil.com:8000", "*", "", f"127.0.0.1:{port}x"):
        status, _, headers, _ = call("GET", f"{base}/api/health", headers={"Host": host})
        area.check(status == 400 and "x-frame-options" in headers, f"Host {host!r}: {status}")
    status, headers = _declared_body(port, 2**21)
    area.check(status == 413 and "content-security-policy" in headers, f"2 MiB body: {status}")
    for origin in ({"Origin": "http://evil.com"}, {"Origin": "null"},
                   {"Referer": "http://evil.com/x"}, {"Sec-Fetch-Site": "cross-site"}):
        for headers in (origin, {**origin, **AUTH}):
            for endpoint in ("/api/experiments/1/cancel", "/api/experiments"):
                status, _, _, _ = call("POST", base + endpoint, SPEC, headers)
                area.check(status == 403, f"{endpoint} {headers}: {status}")
    form = {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.com"}
    status, _, _, _ = call("POST", f"{base}/api/experiments/1/cancel", raw=b"", headers=form)
    area.check(status == 403, f"a cross-site form's cancel: {status}")
    for kind, raw in (("application/json; charset=utf-16", json.dumps(SPEC).encode("utf-16")),
                      ("text/plain", json.dumps(SPEC).encode())):  # fmt: skip
        status, _, _, _ = call("POST", f"{base}/api/experiments", raw=raw,
                               headers={**AUTH, "Content-Type": kind})  # fmt: skip
        area.check(status == 415, f"Content-Type {kind}: {status}")
    for raw, field in ((b'{"name": "x", "cache": {"ratio": NaN}}', "cache.ratio"),
                       (b'{"cache": {"ratio": 1e400}}', "cache.ratio"),
                       (b'{"seed": Infinity}', "seed"), (b'{"seed": 1, "seed": 2}', "seed")):
        status, text, _, _ = call("POST", f"{base}/api/specs/validate", raw=raw, headers=AUTH)
        ok = status == 422 and json.loads(text)["detail"][0]["field"] == field
        area.check(ok, f"{raw!r}: {status} {text[:80]}")
    return area


def schema_truths(base: str) -> Area:
    area = Area("the schema and the service agree")
    from jsonschema import Draft202012Validator

    document = call("GET", f"{base}/openapi.json", headers=AUTH)[1]
    openapi = json.loads(document)
    validator = Draft202012Validator({"$ref": "#/components/schemas/ExperimentSpec",
                                      "components": openapi["components"]})  # fmt: skip
    for fields in ({"cache": {"bytes": 0}}, {"tuning": {**TUNING, "space": {
            "cache.bytes": {"choices": [None]}}}}):  # fmt: skip
        body = {**SPEC, **fields}
        status, _, _, _ = call("POST", f"{base}/api/studies" if "tuning" in fields else
                               f"{base}/api/specs/validate", body, AUTH)  # fmt: skip
        area.check(status == 422 and not validator.is_valid(body), f"{fields}: {status}")
    return area


def mlflow_and_children(base: str, process: subprocess.Popen) -> Area:
    area = Area("the MLflow UI: read-only, behind the token, gone with the service")
    deadline = time.monotonic() + 120
    url = None
    while url is None and time.monotonic() < deadline:
        url = json.loads(call("GET", f"{base}/api/config")[1]).get("mlflow_ui_url")
        time.sleep(0.2)
    area.check(url is not None, "the UI answered within 120 s")
    search = f"{url}/ajax-api/2.0/mlflow/experiments/search"
    area.check(call("POST", search, {"max_results": 1})[0] == 401, "a search without the token")
    area.check(call("POST", search, {"max_results": 1}, AUTH)[0] == 200, "a search with it")
    create = f"{url}/api/2.0/mlflow/experiments/create"
    area.check(call("POST", create, {"name": "x"}, AUTH)[0] == 403, "experiments/create")
    children = psutil.Process(process.pid).children(recursive=True)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(30)
    time.sleep(5)
    left = [c.pid for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    area.check(not left, f"{len(children)} child processes after kill -9: {left} left")
    area.check(call("GET", f"{url}/health")[0] == 0, "the UI's port after kill -9")
    return area


def database(home: Path, port: int) -> Area:
    area = Area("the app database damaged")
    path = home / "heraldbench.db"
    process = _serve(home, port)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, process=process)
        path.write_bytes(b"")
        status, text, _, _ = call("GET", f"{base}/api/health")
        area.check(status == 503 and "truncated" in text, f"health, truncated: {status}")
        area.check(call("POST", f"{base}/api/experiments", SPEC, AUTH)[0] == 503, "a write")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
    path.write_bytes(b"\x00" * 4096)
    process = _serve(home, port)
    try:
        status, text = _answer(f"{base}/api/health", process)
        area.check(status == 503 and ".recover" in text, f"started on a damaged file: {status}")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
    return area


def _answer(url: str, process: subprocess.Popen, timeout: float = 120) -> tuple[int, str]:
    """The first answer of ``url`` (a degraded service answers 503: no wait for a 200)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        status, text, _, _ = call("GET", url)
        if status:
            return status, text
        time.sleep(0.25)
    return 0, f"no answer (exit {process.poll()})"


def _serve(home: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "HERALDBENCH_HOME": str(home), "HERALDBENCH_API_TOKEN": TOKEN,
           "HERALDBENCH_PROTECT_READS": "true", "HERALDBENCH_DATA_DIRS": str(home / "data"),
           "HERALDBENCH_MLFLOW_UI_PORT": str(free_port()), "HERALDBENCH_DASHBOARD_ADDRESS": ":0"}
    command = [str(Path(sys.executable).with_name("heraldbench")), "serve", "--port", str(port),
               "--log-level", "warning"]  # fmt: skip
    home.mkdir(parents=True, exist_ok=True)
    log = (home / "serve.log").open("ab")
    return subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True)


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="probe-"))
    home, data = folder / "home", folder / "home" / "data"
    data.mkdir(parents=True)
    outside = folder / "outside" / "secret.yaml"
    outside.parent.mkdir()
    outside.write_text(f"format: heraldbench-hardware-profile\nname: {SECRET}\n")
    port = free_port()
    process = _serve(home, port)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, process=process)
        areas = [paths(base, data, outside), token(base), server_errors(base), bombs(base),
                 http(base, port), schema_truths(base), mlflow_and_children(base, process)]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    areas.append(database(folder / "db", free_port()))
    rows = [a.row() for a in areas]
    for row in rows:
        print(f"{row['area']:<66} {row['handled']:>4}/{row['tried']:<4} slowest "
              f"{row['slowest_ms']:>7.1f} ms ({row['slowest'][:50]})  "
              f"{'; '.join(row['misses'][:3])}")
    write_record("security_probe", {"areas": rows})


if __name__ == "__main__":
    main()
