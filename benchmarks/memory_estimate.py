"""The memory estimate a submission is checked against, next to each run's measured peak.

Run: ``python benchmarks/memory_estimate.py`` (every case) or ``--cases naive-lb bagpipe``.
Each case is one spec (``heraldbench simulate`` or ``train``) run in a fresh process, so that its
peak RSS is its own; the record holds the estimate (resources.py), the peak and their ratio.
The estimate must not be below the peak (a run it admits must fit), and should stay within a
few times of it (else it refuses runs a machine could take). Writes
``benchmarks/results/memory_estimate.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from _records import write_record

PROFILE = {"kind": "synthetic", "profile": "criteo-kaggle", "scale": 0.05, "seed": 1}
CLUSTER = {"workers": 8, "batch_size": 256}


def _spec(name: str, scheduler: dict, samples: int = 1_000_000, **extra) -> dict:
    return {
        "name": name, "dataset": {**PROFILE, "samples": samples}, "cluster": CLUSTER,
        "cache": {"ratio": 0.1}, "schedulers": [scheduler], **extra,
    }  # fmt: skip


CASES = {
    "naive-lb": _spec("naive-lb", {"kind": "naive"}),
    "naive": _spec("naive", {"kind": "naive"}, lower_bound=False),
    "herald-lb": _spec("herald-lb", {"kind": "herald"}),
    "het-lfu": _spec("het-lfu", {"kind": "het", "policy": "lfu"}, lower_bound=False),
    "bagpipe": _spec("bagpipe", {"kind": "bagpipe", "lookahead": 200}, lower_bound=False),
    "fae": _spec("fae", {"kind": "fae"}, lower_bound=False),
    "naive-4m-lb": _spec("naive-4m-lb", {"kind": "naive"}, samples=4_000_000),
    "naive-4m": _spec("naive-4m", {"kind": "naive"}, samples=4_000_000, lower_bound=False),
    "naive-16m-lb": _spec("naive-16m-lb", {"kind": "naive"}, samples=16_000_000),
    "naive-16m": _spec("naive-16m", {"kind": "naive"}, samples=16_000_000, lower_bound=False),
    "train-naive": _spec("train-naive", {"kind": "naive"}, samples=100_000, mode="train",
                         embedding_dim=64, train={"model": "small", "max_iterations": 20}),
}


def estimate(spec: dict) -> int:
    from heraldbench.platform.limits import dataset_facts
    from heraldbench.platform.resources import estimate_memory, total_bytes
    from heraldbench.platform.spec import parse_spec

    parsed = parse_spec(spec)
    return total_bytes(estimate_memory(parsed, dataset_facts(parsed.dataset)))


def measure(spec: dict) -> int:
    """Peak RSS in bytes of ``heraldbench simulate|train`` on ``spec`` in a fresh process."""
    command = "train" if spec.get("mode") == "train" else "simulate"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spec.json"
        path.write_text(json.dumps(spec))
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        subprocess.run(
            [sys.executable, "-m", "heraldbench.api.cli", command, str(path), "--json"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:
        raise RuntimeError("a child's peak did not exceed an earlier one; run cases one per call")
    return peak * 1024  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    args = parser.parse_args()
    rows = []
    for name in args.cases:
        # RUSAGE_CHILDREN keeps the largest child's peak: run each case from its own process.
        out = subprocess.run(
            [sys.executable, __file__, "--one", name], check=True, capture_output=True, text=True
        )
        row = json.loads(out.stdout)
        rows.append(row)
        print(f"{name:>14}: estimate {row['estimate_mib']:>8.0f} MiB, peak "
              f"{row['peak_mib']:>8.0f} MiB, ratio {row['ratio']:.2f}", flush=True)
    write_record("memory_estimate", {"cases": rows}, sys.argv)


def one(name: str) -> None:
    spec = CASES[name]
    est, peak = estimate(spec), measure(spec)
    print(json.dumps({"case": name, "estimate_mib": est / 2**20, "peak_mib": peak / 2**20,
                      "ratio": est / peak}))  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        one(sys.argv[2])
    else:
        main()
