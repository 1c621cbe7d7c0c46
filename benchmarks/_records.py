"""Benchmark results kept as data: one JSON record per run of a benchmark script.

A record holds the command that made it, the commit and whether the tree had changes, the date,
the machine (cores, memory, processor, Python and the versions of the libraries measured) and
every figure the script measured. ``benchmarks/results/<name>.json`` is the latest record of a
script; documents that quote a figure are rendered from these records, so each figure traces back
to a run.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["RESULTS", "machine", "read_record", "write_record"]

RESULTS = Path(__file__).resolve().parent / "results"
_LIBRARIES = ("numpy", "numba", "torch", "heraldbench")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=RESULTS.parent, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def machine() -> dict[str, Any]:
    """The facts of this machine a figure depends on."""
    versions = {}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        "cores": os.cpu_count(),
        "memory_gib": round(memory / 2**30, 1),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "versions": versions,
    }


def _summary() -> str:
    """The first paragraph of the running script's docstring: what the benchmark measures."""
    doc = (getattr(sys.modules.get("__main__"), "__doc__", None) or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


def write_record(
    name: str, figures: dict[str, Any], argv: list[str] | None = None, doc: str | None = None
) -> Path:
    """Write ``figures`` as the record ``benchmarks/results/<name>.json``; returns its path.

    ``doc`` says what was measured (default: the script's docstring, first paragraph)."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve() if argv else None
    if script is not None and script.is_relative_to(RESULTS.parent.parent):
        argv[0] = str(script.relative_to(RESULTS.parent.parent))  # as run from the repository
    record = {
        "benchmark": name,
        "doc": _summary() if doc is None else doc,
        "command": " ".join(["python", *argv]),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "figures": figures,
    }
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, default=str) + "\n")
    return path


def read_record(name: str) -> dict[str, Any]:
    return json.loads((RESULTS / f"{name}.json").read_text())
