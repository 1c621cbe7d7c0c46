"""Where FAE's epoch goes at Kaggle scale: its offline phase (sampled counts, the hot/cold split)
and then the replay and simulation, on the independent fields and on a workload profile.

Run: ``python benchmarks/fae_phases.py [--datasets synthetic-criteo criteo-kaggle]
[--fraction 1.0]``; each dataset in a process of its own (its peak RSS its own), after the
kernels are loaded. Prints, per dataset, wall and CPU seconds of each phase (the sampled counts
include spilling a profile's trace, which is made then), the share of hot samples, and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_simulator as bench


def run(dataset: str, fraction: float) -> dict:
    from heraldbench.platform.schedulers import _fae, create
    from heraldbench.platform.sim import simulate

    bench._warm_up("fae", 8, 256, dataset)
    phases: dict[str, list[float]] = {}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            wall, cpu = time.perf_counter(), time.process_time()
            result = fn(*args, **kwargs)
            phases[name] = [time.perf_counter() - wall, time.process_time() - cpu]
            return result
        return wrapper

    _fae.sample_access_counts = timed("counts", _fae.sample_access_counts)
    _fae.find_hot_samples = timed("hot/cold split", _fae.find_hot_samples)
    trace = bench.open_trace(dataset, int(bench.KAGGLE_SAMPLES * fraction))
    scheduler = create("fae", workers=8, batch_size=256, seed=0)
    wall, cpu = time.perf_counter(), time.process_time()
    simulate(trace, scheduler, cache_rows=int(0.1 * trace.layout.total_rows))
    total = [time.perf_counter() - wall, time.process_time() - cpu]
    offline = [sum(p[i] for p in phases.values()) for i in (0, 1)]
    phases["replay and simulation"] = [total[0] - offline[0], total[1] - offline[1]]
    return {"dataset": dataset, "phases": phases, "total": total,
            "hot_input_share": scheduler.profile.hot_input_share,
            "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["synthetic-criteo", "criteo-kaggle"])
    parser.add_argument("--fraction", type=float, default=1.0)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run(args.one, args.fraction)))
        return
    for dataset in args.datasets:
        out = subprocess.run([sys.executable, __file__, "--one", dataset, "--fraction",
                              str(args.fraction)], capture_output=True, text=True, check=True)  # fmt: skip
        row = json.loads(out.stdout.strip().splitlines()[-1])
        cells = ", ".join(f"{name} {w:.1f} s ({c:.1f} CPU)" for name, (w, c) in row["phases"].items())
        print(f"{dataset}: {cells}; total {row['total'][0]:.1f} s; hot samples "
              f"{row['hot_input_share']:.1%}; peak RSS {row['peak_rss_gib']:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
