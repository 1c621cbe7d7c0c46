"""A fresh clone's first `heraldbench quickstart` against its second, for each commit given.

Each commit is cloned afresh (no numba cache, no `.heraldbench`), and `heraldbench quickstart` runs
twice in each clone: every clone's first run, then every clone's second, so that a drifting load
on a shared machine falls on all of them alike. The project's Python environment runs them, with
`PYTHONPATH` on the clone's sources. The figure is the first run's wall time over the second's.

Run: ``python benchmarks/bench_first_run.py --commit before=REV --commit after=HEAD``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import write_record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def clone(rev: str, into: Path) -> str:
    """A fresh clone of this repository at ``rev``; returns the commit's short id."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "checkout", "-q", rev], check=True)
    out = subprocess.run(["git", "-C", str(into), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return out.stdout.strip()


def quickstart(tree: Path, samples: int | None, timeout: float) -> float:
    """Wall seconds of one `heraldbench quickstart` in ``tree``."""
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join(str(tree / p) for p in ("platform", "pipelines", "api")),
        "HERALDBENCH_HOME": str(tree / ".heraldbench"),
    }
    env.pop("NUMBA_CACHE_DIR", None)  # numba's cache beside the clone's sources: fresh
    command = [sys.executable, "-c", "from heraldbench.api.cli import main; main()", "quickstart"]
    command += ["--samples", str(samples)] if samples else []
    started = time.perf_counter()
    subprocess.run(command, cwd=tree, env=env, check=True, timeout=timeout,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", action="append", required=True, metavar="NAME=REV")
    parser.add_argument("--samples", type=int, default=None, help="default: the quickstart's")
    parser.add_argument("--timeout", type=float, default=3600.0)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="heraldbench-first-run-"))
    try:
        trees = {}
        for given in args.commit:
            name, rev = given.split("=", 1)
            trees[name] = (scratch / name, clone(rev, scratch / name))
        seconds: dict[str, list[float]] = {name: [] for name in trees}
        for attempt in ("first", "second"):
            for name, (tree, _) in trees.items():
                seconds[name].append(quickstart(tree, args.samples, args.timeout))
                print(f"{name} {attempt}: {seconds[name][-1]:.1f} s", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    rows = [
        {"tree": name, "commit": commit, "first_s": round(seconds[name][0], 1),
         "second_s": round(seconds[name][1], 1),
         "first_over_second": round(seconds[name][0] / seconds[name][1], 2)}
        for name, (_, commit) in trees.items()
    ]  # fmt: skip
    for row in rows:
        print(row)
    write_record("first_run", {"samples": args.samples or "the quickstart's", "runs": rows})


if __name__ == "__main__":
    main()
