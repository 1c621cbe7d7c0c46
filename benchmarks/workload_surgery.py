"""Where a profile misses Herald's partition: surgery on the real trace (docs/workloads.md).

    python benchmarks/workload_surgery.py KIND:PATH [KIND:PATH ...] [--shape W:F ...] [--seed S]

The round trip (``heraldbench calibrate --check``) says *that* a profile's trace gives Herald's
partition less than the real trace does; this says *which structure* of the real trace the gain
comes from. Each surgery rearranges one kind of structure of the real trace R and keeps the rest
(the order of samples, every block's classes, how often each row is accessed), and the relative
pull of Herald's partition (herald-partition-only; Herald's pull is the same) is measured
against that trace's own naive. A surgery that moves R's figure to the profile's names
structure the profile does not reproduce. Blocks and classes are the fit's (``_structure``):

- ``real``: R as read; ``profile``: R's fitted profile generated with as many samples; then each
  surgery of :mod:`heraldbench.platform.data.workload.surgery` (its docstring defines them).

Real data never leaves the machine: the script prints figures only. Traces whose file does not
exist are skipped with a message.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

from heraldbench.platform.data.workload import _structure as st
from heraldbench.platform.data.workload.check import Shape, batch_for, parse_shape, round_trip_spec
from heraldbench.platform.data.workload.fit import HEAD_MIN, ROOT_LEVELS, fit_profile, read_trace
from heraldbench.platform.data.workload.surgery import surgeries
from heraldbench.platform.data.workload.trace import ProfileTrace

sys.path.insert(0, str(Path(__file__).parent))
from workload_fidelity import real_traces  # a sibling script

SCHEDULERS = ("naive", "herald-partition-only")


def partition_pull(trace, distinct: int, shape: Shape) -> float:
    """Relative pull of Herald's partition on ``trace``, caches sized on ``distinct`` rows (the
    real trace's)."""
    from heraldbench.platform.runner import fill_relative, simulate_run

    cache_rows = max(1, int(shape.cache_fraction * distinct))
    batch = batch_for(cache_rows, shape.workers, trace.layout.num_tables)
    spec = round_trip_spec(shape.workers, batch, cache_rows)
    runs = [simulate_run(spec, s, trace=trace) for s in spec.schedulers if s.kind in SCHEDULERS]
    fill_relative(runs)
    return next(run.relative["pull"] for run in runs if run.label != "naive")


def diagnose(kind: str, path: Path, trace, shapes: list[Shape], seed: int) -> str:
    """The surgery table of one real trace (in memory)."""
    data = read_trace(trace)
    structure = st.read_structure(data.ids, st.find_blocks(data.ids), HEAD_MIN, ROOT_LEVELS)
    profile = fit_profile(data, name=path.stem, source=path.name, source_kind=kind, seed=seed)
    synthetic = ProfileTrace(profile, samples=trace.num_samples, seed=seed).materialize()
    offsets, distinct = trace.layout.offsets, len(np.unique(trace.ids))
    cases = {"real": trace, "profile": synthetic}
    altered = surgeries(data.ids, structure, np.random.default_rng(seed))
    cases.update({name: dataclasses.replace(trace, ids=ids + offsets)
                  for name, ids in altered.items()})  # fmt: skip
    title = (f"### {path.stem} ({kind}, {trace.num_samples:,} samples, {distinct:,} rows, "
             f"{len(structure.blocks)} blocks)")  # fmt: skip
    lines = [title, "",
             "| trace | ids changed | " + " | ".join(
                 f"pull, W={sh.workers}, cache {sh.cache_fraction:.0%}" for sh in shapes) + " |",
             "|---|---|" + "---|" * len(shapes)]  # fmt: skip
    for name, case in cases.items():
        changed = "-" if name in ("real", "profile") else f"{(case.ids != trace.ids).mean():.1%}"
        cells = [changed]
        for shape in shapes:
            cells.append(f"{partition_pull(case, distinct, shape):.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", metavar="KIND:PATH")
    parser.add_argument("--shape", action="append", type=parse_shape, dest="shapes",
                        help="W:CACHE_FRACTION (default: 8:0.1 and 16:0.2)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    shapes = args.shapes or [Shape(8, 0.10), Shape(16, 0.20)]
    for kind, path, trace in real_traces(args.traces):
        print(diagnose(kind, path, trace, shapes, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
