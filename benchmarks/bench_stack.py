"""The compose stack in a container engine: the stack test (tests/stack/test_images.py) run once,
with the time its build took (cold with --cold: the app and MLflow images removed first, their
base images kept), the time from `up` to every health check passing, each container's memory
after 30 s idle, the images' sizes, and the test's outcome.

Run: ``python benchmarks/bench_stack.py [--cold]`` with a running engine and the base images (the
official ones, or docker/local-images.sh's stand-ins); HERALDBENCH_COMPOSE picks the compose
implementation (tests/stack/engine.py). Writes benchmarks/results/stack.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _records import write_record

ROOT = Path(__file__).resolve().parents[1]
#: The images compose builds (docker-compose.yml's image: names) and their bases.
BUILT = ("heraldbench-app:latest", "heraldbench-mlflow:3.17.2")
TEST = "tests/stack/test_images.py"


def _output(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def _size_mib(image: str) -> float | None:
    done = subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", image],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return round(int(done.stdout) / 2**20) if done.returncode == 0 else None


def _base_images() -> dict[str, str]:
    local = ROOT / "docker" / "local-images.env"
    lines = local.read_text().splitlines() if local.is_file() else []
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def run_test() -> tuple[dict, dict]:
    """The stack test's outcome (counts, seconds) and the figures it measured."""
    with tempfile.TemporaryDirectory() as folder:
        figures_file = Path(folder) / "figures.json"
        env = {**os.environ, "HERALDBENCH_STACK_FIGURES": str(figures_file)}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--runstack", TEST],
            cwd=ROOT, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        seconds = round(time.monotonic() - started, 1)
        figures = json.loads(figures_file.read_text()) if figures_file.is_file() else {}
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|error)", summary)}
    if done.returncode != 0:
        print(done.stdout[-6000:], done.stderr[-2000:], file=sys.stderr)
    return {"summary": summary, **counts, "seconds": seconds}, figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="remove the built images first")
    args = parser.parse_args()
    if args.cold:
        subprocess.run(["docker", "image", "rm", *BUILT], capture_output=True, check=False)
    outcome, measured = run_test()
    bases = _base_images()
    figures = {
        "engine": "Docker " + _output("docker", "info", "--format", "{{.ServerVersion}}"),
        "compose": measured.pop("compose", None),
        "base_images": "stand-ins (docker/local-images.sh)" if bases else "official",
        "build": "cold" if args.cold else "cached",
        **measured,
        "image_mib": {image: _size_mib(image) for image in (*BUILT, *bases.values())},
        "test": outcome,
    }
    print(json.dumps(figures, indent=1))
    write_record("stack", figures)
    return 0 if outcome.get("failed", 0) == 0 and "passed" in outcome else 1


if __name__ == "__main__":
    sys.exit(main())
