"""Every command the README shows runs, at a small size: a newcomer who copies one gets what it
says. Commands are read from the README's ``bash`` blocks; one with no way to run it here fails
:func:`test_every_command_the_readme_shows_is_run`, so a command added to the README is added
here too."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.platform.data.workload.made_data import criteo_tsv

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
HERALDBENCH = str(Path(sys.executable).with_name("heraldbench"))


def readme_commands() -> list[str]:
    """The commands of the README's bash blocks (comments and continuations dropped)."""
    blocks = re.findall(r"```bash\n(.*?)```", README, re.DOTALL)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _small(name: str, folder: Path, **changes: Any) -> Path:
    """``examples/NAME`` at a test's size: fewer samples and workers, the same shape."""
    spec = yaml.safe_load((ROOT / "examples" / name).read_text())
    spec["dataset"] = {**spec["dataset"], "samples": 20_000, "scale": 0.01}
    spec["cluster"] = {"workers": 2, "batch_size": 32}
    spec.update(changes)
    path = folder / name
    path.write_text(yaml.safe_dump(spec))
    return path


def _run(*args: str, home: Path, expect: int = 0, timeout: float = 600) -> str:
    env = {**os.environ, "HERALDBENCH_HOME": str(home), "HERALDBENCH_TRACK": "false",
           "HERALDBENCH_DASHBOARD_ADDRESS": ":0", "COLUMNS": "200"}  # fmt: skip
    done = subprocess.run([HERALDBENCH, *args], capture_output=True, text=True, env=env,
                          cwd=home, timeout=timeout)  # fmt: skip
    assert done.returncode == expect, (args, done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout


def simulate_small(tmp: Path) -> None:
    out = _run("simulate", str(_small("small.yaml", tmp)), home=tmp)
    assert "herald" in out and "naive" in out


def simulate_report(tmp: Path) -> None:
    spec = _small("comparison.yaml", tmp, cache={"ratio": 0.5})
    _run("simulate", str(spec), "--report", str(tmp / "out"), home=tmp)
    assert (tmp / "out" / "table1.md").is_file() and (tmp / "out" / "comparison.png").is_file()


def _sequence_spec(tmp: Path) -> Path:
    spec = yaml.safe_load((ROOT / "examples" / "sequence.yaml").read_text())
    spec["dataset"]["samples"] = 20_000
    spec["cluster"] = {"workers": 4, "batch_size": 16}
    path = tmp / "sequence.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def simulate_sequence(tmp: Path) -> None:
    out = _run("simulate", str(_sequence_spec(tmp)), "--json", home=tmp)
    runs = json.loads(out)["runs"]
    assert {run["scheduler"] for run in runs} >= {"naive", "herald", "bagpipe"}
    assert all(run["counts"]["accesses"] % 24 == 0 for run in runs)  # 1 + 3 + 20 ids a sample


def place_sequence(tmp: Path) -> None:
    out = _run("place", str(_sequence_spec(tmp)), "--hosts", "2", "--devices-per-host", "2",
               "--json", home=tmp)
    assert {row["placement"] for row in json.loads(out)} >= {"row-wise", "flexshard"}


def validate(tmp: Path) -> None:
    assert json.loads(_run("validate", str(ROOT / "examples" / "small.yaml"), home=tmp))["name"]


def schedulers(tmp: Path) -> None:
    assert "herald-plus" in _run("schedulers", home=tmp)


def train(tmp: Path) -> None:
    spec = _small("train.yaml", tmp, train={"model": "small", "max_iterations": 20})
    assert "AUC" in _run("train", str(spec), home=tmp)


def run_grid(tmp: Path) -> None:
    spec = _small("grid.yaml", tmp, seeds=[0])
    _run("run", str(spec), "--out", str(tmp / "out"), "--workers", "1", home=tmp)
    assert (tmp / "out").is_dir()


def tune(tmp: Path) -> None:
    spec = _small("tune.yaml", tmp, cache={"ratio": 0.3})
    spec_doc = yaml.safe_load(spec.read_text())
    spec_doc["tuning"] = {**spec_doc["tuning"], "trials": 2, "parallel": 1,
                          "space": {"scheduler.lookahead": {"low": 1, "high": 4}}}  # fmt: skip
    spec.write_text(yaml.safe_dump(spec_doc))
    _run("tune", str(spec), "--workers", "1", home=tmp)


def tune_placement(tmp: Path) -> None:
    spec_doc = yaml.safe_load((ROOT / "examples" / "tune-placement.yaml").read_text())
    spec_doc["dataset"]["samples"] = 20_000
    spec_doc["tuning"] = {**spec_doc["tuning"], "trials": 2, "parallel": 1}
    spec = tmp / "tune-placement.yaml"
    spec.write_text(yaml.safe_dump(spec_doc))
    out = _run("tune", str(spec), "--workers", "1", "--json", home=tmp)
    rows = json.loads(out)["trials"]
    assert [row["state"] for row in rows] == ["COMPLETE", "COMPLETE"]
    assert all(row["metrics"]["device_memory"] > 0 for row in rows)


def calibrate(tmp: Path) -> None:
    log = criteo_tsv(tmp / "train.txt")
    _run("calibrate", str(log), "--kind", "criteo-tsv", "--out", str(tmp / "mine.yaml"),
         "--check", home=tmp)  # fmt: skip
    assert (tmp / "mine.yaml").is_file()


def conformance(tmp: Path) -> None:
    """Without a checkout of the released code: refused, naming what it looked for (the runs
    against checkouts are tests/platform/conformance/test_released_code.py's)."""
    (tmp / "src" / "herald").mkdir(parents=True)
    _run("conformance", "herald", "--reference", str(tmp / "src" / "herald"), home=tmp, expect=2)


def reproduce(tmp: Path) -> None:
    """At the smallest size it takes: every claim gets a row and both files are written."""
    from heraldbench.platform.reproduce import MIN_SAMPLES

    _run("reproduce", "--samples", str(MIN_SAMPLES), "--out", str(tmp / "out" / "claims"),
         home=tmp)  # fmt: skip
    document = json.loads((tmp / "out" / "claims" / "claims.json").read_text())
    assert all(row["normative"]["verdict"] for row in document["claims"])
    assert "| claim |" in (tmp / "out" / "claims" / "claims.md").read_text()


def serve_and_submit(tmp: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "HERALDBENCH_HOME": str(tmp), "HERALDBENCH_TRACK": "false",
           "HERALDBENCH_DASHBOARD_ADDRESS": ":0"}  # fmt: skip
    process = subprocess.Popen([HERALDBENCH, "serve", "--port", str(port)], env=env, cwd=tmp,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        body = json.dumps(yaml.safe_load(_small("small.yaml", tmp).read_text())).encode()
        deadline = time.monotonic() + 120
        while True:
            try:
                request = urllib.request.Request(f"{base}/api/experiments", data=body,
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                    assert response.status == 202
                    break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "serve never answered"
                time.sleep(0.5)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(60)


def quickstart(tmp: Path) -> None:
    out = _run("quickstart", "--samples", "20000", "--workers", "1", home=tmp)
    assert "herald" in out and (tmp / "quickstart" / "results.json").is_file()


#: How each README command runs here, at a small size (keys: the command's first words).
HOW: dict[str, Callable[[Path], None] | None] = {
    "python3 -m venv": None,  # the installation this test runs in
    "pytest": None,  # this suite
    ". .ci/system-deps.sh": None,  # installs system packages: CI runs it
    "heraldbench quickstart": quickstart,
    "heraldbench simulate examples/small.yaml": simulate_small,
    "heraldbench simulate examples/comparison.yaml": simulate_report,
    "heraldbench simulate examples/sequence.yaml": simulate_sequence,
    "heraldbench place examples/sequence.yaml": place_sequence,
    "heraldbench validate": validate,
    "heraldbench schedulers": schedulers,
    "heraldbench train": train,
    "heraldbench run": run_grid,
    "heraldbench tune examples/tune-placement.yaml": tune_placement,
    "heraldbench tune": tune,
    "heraldbench serve": serve_and_submit,
    "curl -X POST": serve_and_submit,
    "heraldbench calibrate": calibrate,
    "heraldbench conformance": conformance,
    "heraldbench reproduce": reproduce,
}


def _how(command: str) -> str | None:
    return next((prefix for prefix in HOW if command.startswith(prefix)), None)


def test_every_command_the_readme_shows_is_run() -> None:
    unknown = [command for command in readme_commands() if _how(command) is None]
    assert unknown == [], f"README commands no test runs: {unknown}"


@pytest.mark.parametrize(
    "prefix", sorted({p for p, how in HOW.items() if how is not None and p != "curl -X POST"})
)
def test_the_readme_command_runs(prefix: str, tmp_path: Path) -> None:
    HOW[prefix](tmp_path)  # type: ignore[misc]
