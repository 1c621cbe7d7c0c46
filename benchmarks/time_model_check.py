"""The time model, checked (issue 17 item 5): profile-cluster, then a distributed training of
naive, Herald, HET, FAE and BagPipe on that profile, on 2 and 4 ranks; prints the modelled vs
measured iteration time per scheduler, their ratio and whether the speedup order agrees.

    PYTHONPATH=platform:pipelines:api flock /work/cpu.lock \\
        python benchmarks/time_model_check.py --ranks 2 --ranks 4 --samples 65536 --repeat 3 \\
        --out /tmp/tmc

For each rank count it writes ``profile-<R>r.yaml`` (the measured profile), ``spec-<R>r.yaml``
and ``train-<R>r.json`` (the run document, with ``time_check``) under ``--out``. The profile is
measured right before the training, under the same load, as the model is meant to be used.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import yaml

SCHEDULERS = ["naive", "herald", "het", "fae", "bagpipe"]


def spec_for(ranks: int, samples: int, profile: Path | None, dim: int = 16) -> dict:
    """The training checked: small DLRM, 256 samples per worker, cache 20% of rows."""
    spec = {
        "name": f"time-model-check-{ranks}r",
        "mode": "train",
        "dataset": {"kind": "synthetic-criteo", "samples": samples, "seed": 1, "scale": 0.001},
        "cluster": {"workers": ranks, "batch_size": 256},
        "cache": {"ratio": 0.2},
        "embedding_dim": dim,
        "schedulers": [{"kind": k} for k in SCHEDULERS],
        "train": {"model": "small", "backend": "distributed"},
    }
    if profile is not None:
        spec["time_profile"] = str(profile)
    return spec


def check(ranks: int, samples: int, out: Path, dim: int = 16, repeat: int = 1) -> dict:
    from heraldbench.platform.distributed.profiling import options_for, profile_cluster
    from heraldbench.platform.spec import parse_spec
    from heraldbench.platform.timeprofile import save_time_profile
    from heraldbench.platform.training import train_experiment

    bare = parse_spec(spec_for(ranks, samples, None, dim))
    began = time.perf_counter()
    profile = save_time_profile(out / f"profile-{ranks}r.yaml",
                                profile_cluster(options_for(bare), ranks))  # fmt: skip
    profiled = time.perf_counter() - began
    document = spec_for(ranks, samples, profile, dim)
    (out / f"spec-{ranks}r.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    results = []
    for r in range(repeat):
        results.append(train_experiment(parse_spec(document)).to_json())
        name = f"train-{ranks}r.json" if repeat == 1 else f"train-{ranks}r-{r}.json"
        (out / name).write_text(json.dumps(results[-1], indent=1, default=float))
    return median_check(results) | {"profile_seconds": profiled}


def median_check(results: list[dict]) -> dict:
    """The time check of each scheduler's median run over the repeats (a real run, not an
    average), with the spread of the measured iteration over the repeats."""
    from heraldbench.platform.timecheck import measured_iteration, time_check

    if len(results) == 1:
        return results[0]["time_check"]
    runs, spread = [], {}
    for i, first in enumerate(results[0]["runs"]):
        repeats = sorted((r["runs"][i] for r in results), key=measured_iteration)
        runs.append(repeats[len(repeats) // 2])
        low, high = measured_iteration(repeats[0]), measured_iteration(repeats[-1])
        spread[first.get("label") or first["scheduler"]] = [low, high]
    return time_check(runs) | {"repeats": len(results), "measured_spread_s": spread}


def table(ranks: int, tc: dict) -> str:
    from heraldbench.platform.timecheck import time_check_md

    return time_check_md(tc, title=f"{ranks} ranks")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, action="append", help="rank counts (default 2, 4)")
    parser.add_argument("--samples", type=int, default=16384, help="synthetic samples")
    parser.add_argument("--dim", type=int, default=16, help="embedding dim")
    parser.add_argument("--repeat", type=int, default=1,
                        help="trainings per rank count; each scheduler's median run is checked")
    parser.add_argument("--out", type=Path, default=Path("time-model-check"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    checks = {}
    for ranks in args.ranks or [2, 4]:
        checks[ranks] = check(ranks, args.samples, args.out, args.dim, args.repeat)
        print(table(ranks, checks[ranks]), flush=True)
        for label, (low, high) in checks[ranks].get("measured_spread_s", {}).items():
            print(f"- {label}: measured {low * 1e3:.2f}–{high * 1e3:.2f} ms over "
                  f"{args.repeat} trainings", flush=True)
    (args.out / "time_check.json").write_text(json.dumps(checks, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
