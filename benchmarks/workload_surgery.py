"""Where a profile misses Herald's partition: surgery on the real trace (docs/workloads.md).

    python benchmarks/workload_surgery.py KIND:PATH [KIND:PATH ...] [--shape W:F ...] [--seed S]
        [--figure SCHEDULER:TOTAL ...]

The round trip (``heraldbench calibrate --check``) says *that* a profile's trace gives Herald's
partition less than the real trace does; this says *which structure* of the real trace the gain
comes from. Each surgery rearranges one kind of structure of the real trace R and keeps the rest
(the order of samples, every block's classes, how often each row is accessed), and the relative
pull of Herald's partition (herald-partition-only; Herald's pull is the same) is measured
against that trace's own naive. A surgery that moves R's figure to the profile's names
structure the profile does not reproduce. ``--figure bagpipe:overall`` (any scheduler, and
``pull``, ``push`` or ``overall``; repeatable) measures the figures given instead, the same way.
Each shape also gets the mean number of distinct rows in a global batch. Blocks and classes are
the fit's (``_structure``):

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
from heraldbench.platform.data.workload.fit import HEAD_MIN, ROOT_LEVELS, fit_profile, read_trace
from heraldbench.platform.data.workload.surgery import real_head_combinations, surgeries
from heraldbench.platform.data.workload.trace import ProfileTrace
from heraldbench.platform.workload_check import (
    Shape,
    compare_traces,
    parse_shape,
    round_trip_spec,
)

sys.path.insert(0, str(Path(__file__).parent))
from workload_fidelity import real_traces  # a sibling script

#: (scheduler, total) measured by default: the pull of Herald's partition.
PARTITION_PULL = ("herald-partition-only", "pull")
TOTALS = ("pull", "push", "overall")


def parse_figure(text: str) -> tuple[str, str]:
    """``SCHEDULER:TOTAL`` (e.g. ``bagpipe:overall``) as a pair."""
    from heraldbench.platform.schedulers import registered

    kind, _, total = text.partition(":")
    if kind not in registered() or total not in TOTALS:
        raise argparse.ArgumentTypeError(
            f"expected SCHEDULER:TOTAL with a scheduler of {sorted(registered())} and a total of "
            f"{list(TOTALS)}, got {text!r}")  # fmt: skip
    return kind, total


def distinct_per_batch(trace, distinct: int, shape: Shape) -> float:
    """Mean distinct rows of a global batch at ``shape``: BagPipe all-reduces a batch's rows, so
    its overall follows this count (docs/workloads.md)."""
    size = shape.workers * shape.sizes(distinct, trace.layout.num_tables)[1]
    starts = range(0, trace.num_samples - size + 1, size)
    return float(np.mean([len(np.unique(trace.ids[i:i + size])) for i in starts]))


def relative_figures(trace, distinct: int, shape: Shape,
                     figures: list[tuple[str, str]]) -> list[float]:
    """Each (scheduler, total) of ``figures`` on ``trace`` relative to its naive, caches sized
    on ``distinct`` rows (the real trace's)."""
    from heraldbench.platform.runner import fill_relative, simulate_run

    cache_rows, batch = shape.sizes(distinct, trace.layout.num_tables)
    spec = round_trip_spec(shape.workers, batch, cache_rows)
    kinds = {"naive", *(kind for kind, _ in figures)}
    runs = [simulate_run(spec, s, trace=trace) for s in spec.schedulers if s.kind in kinds]
    fill_relative(runs)
    by_kind = {run.scheduler: run.relative for run in runs}
    return [by_kind[kind][total] for kind, total in figures]


def diagnose(kind: str, path: Path, trace, shapes: list[Shape], seed: int,
             figures: list[tuple[str, str]]) -> str:
    """The surgery table of one real trace (in memory)."""
    data = read_trace(trace)
    profile = fit_profile(data, name=path.stem, source=path.name, source_kind=kind, seed=seed)
    names = list(trace.layout.names)
    blocks = [[names.index(field) for field in block.fields] for block in profile.blocks]
    structure = st.read_structure(data.ids, blocks, HEAD_MIN, ROOT_LEVELS)  # the fit's blocks
    synthetic = ProfileTrace(profile, samples=trace.num_samples, seed=seed).materialize()
    offsets, distinct = trace.layout.offsets, len(np.unique(trace.ids))
    cases = {"real": trace, "profile": synthetic}
    altered = surgeries(data.ids, structure, np.random.default_rng(seed))
    cases.update({name: dataclasses.replace(trace, ids=ids + offsets)
                  for name, ids in altered.items()})  # fmt: skip
    title = (f"### {path.stem} ({kind}, {trace.num_samples:,} samples, {distinct:,} rows, "
             f"{len(structure.blocks)} blocks)")  # fmt: skip
    heads = [f"{label}, W={sh.workers}, cache {sh.cache_fraction:.0%}" for sh in shapes
             for label in [f"{scheduler} {total}" for scheduler, total in figures]
             + ["distinct rows per global batch"]]  # fmt: skip
    lines = [title, "", "| trace | ids changed | " + " | ".join(heads) + " |",
             "|---|---|" + "---|" * len(heads)]  # fmt: skip
    for name, case in cases.items():
        changed = "-" if name in ("real", "profile") else f"{(case.ids != trace.ids).mean():.1%}"
        cells = [changed]
        for shape in shapes:
            cells.extend(f"{v:.3f}" for v in relative_figures(case, distinct, shape, figures))
            cells.append(f"{distinct_per_batch(case, distinct, shape):,.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines) + "\n" + _combined(trace, data, structure, synthetic, seed) + "\n"


def _combined(trace, data, structure, synthetic, seed: int) -> str:
    """The round trip of the profile's trace, alone and with the real trace's head combinations
    (:func:`real_head_combinations`): the worst differences over every scheduler and shape."""
    local = (synthetic.ids - synthetic.layout.offsets).astype(np.int64)
    heads = st.read_structure(local, structure.blocks, HEAD_MIN, ROOT_LEVELS).classes == st.HEAD
    combined = real_head_combinations(
        local, heads, data.ids, structure.classes == st.HEAD, structure.blocks,
        st.head_values(data.ids, structure), np.random.default_rng(seed),
    )  # fmt: skip
    alone = compare_traces(trace, synthetic)
    mixed = compare_traces(trace, dataclasses.replace(synthetic, ids=combined + synthetic.layout.offsets))
    return "\n".join(
        f"- {name}: worst traffic difference {r.worst_traffic:.3f} (target ±0.03), miss-ratio "
        f"curve {r.worst_mrc:.3f} (±0.02); beyond ±0.03: " + (", ".join(
            f"{row['scheduler']} {row['total']} W={row['workers']} {row['difference']:+.3f}"
            for row in r.rows if abs(row["difference"]) > 0.03) or "none")
        for name, r in (("profile", alone), ("profile with the real head combinations", mixed))
    ) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", metavar="KIND:PATH")
    parser.add_argument("--shape", action="append", type=parse_shape, dest="shapes",
                        help="W:CACHE_FRACTION (default: 8:0.1 and 16:0.2)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--figure", action="append", type=parse_figure, dest="figures",
                        metavar="SCHEDULER:TOTAL",
                        help="figure to measure (default: herald-partition-only:pull)")  # fmt: skip
    args = parser.parse_args()
    shapes = args.shapes or [Shape(8, 0.10), Shape(16, 0.20)]
    figures = args.figures or [PARTITION_PULL]
    for kind, path, trace in real_traces(args.traces):
        print(diagnose(kind, path, trace, shapes, args.seed, figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
