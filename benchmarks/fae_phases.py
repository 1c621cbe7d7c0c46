"""Where FAE's epoch goes at Kaggle scale: its offline phase (sampled counts, the hot/cold split)
and then the replay and simulation, on the independent fields and on a workload profile.

Run: ``python benchmarks/fae_phases.py [--datasets synthetic-criteo criteo-kaggle]
[--fraction 1.0]``; each dataset in a process of its own (its peak RSS its own), after the
kernels are loaded. Prints, per dataset, wall and CPU seconds and minor page faults (memory
touched for the first time: costly on a virtual machine, ``fresh_memory.py``) of each phase (the
sampled counts include spilling a profile's trace, which is made then), the share of hot samples,
the epoch's system seconds, and peak RSS.
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
            start = _clocks()
            result = fn(*args, **kwargs)
            phases[name] = [now - then for now, then in zip(_clocks(), start)]
            return result
        return wrapper

    _fae.sample_access_counts = timed("counts", _fae.sample_access_counts)
    _fae.find_hot_samples = timed("hot/cold split", _fae.find_hot_samples)
    trace = bench.open_trace(dataset, int(bench.KAGGLE_SAMPLES * fraction))
    scheduler = create("fae", workers=8, batch_size=256, seed=0)
    start, system = _clocks(), resource.getrusage(resource.RUSAGE_SELF).ru_stime
    simulate(trace, scheduler, cache_rows=int(0.1 * trace.layout.total_rows))
    total = [now - then for now, then in zip(_clocks(), start)]
    system = resource.getrusage(resource.RUSAGE_SELF).ru_stime - system
    offline = [sum(p[i] for p in phases.values()) for i in range(3)]
    phases["replay and simulation"] = [total[i] - offline[i] for i in range(3)]
    return {"dataset": dataset, "phases": phases, "total": total, "system_seconds": system,
            "hot_input_share": scheduler.profile.hot_input_share,
            "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}  # fmt: skip


def _clocks() -> list[float]:
    """Wall seconds, CPU seconds, minor page faults so far."""
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    return [time.perf_counter(), time.process_time(), faults]


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
        cells = ", ".join(f"{name} {w:.1f} s ({c:.1f} CPU, {f / 1e3:,.0f} k faults)"
                          for name, (w, c, f) in row["phases"].items())  # fmt: skip
        print(f"{dataset}: {cells}; total {row['total'][0]:.1f} s ({row['system_seconds']:.1f} "
              f"system); hot samples {row['hot_input_share']:.1%}; peak RSS "
              f"{row['peak_rss_gib']:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
