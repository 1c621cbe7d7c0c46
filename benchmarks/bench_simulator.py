"""Simulator throughput and peak memory at Criteo-Kaggle scale.

Run: ``python benchmarks/bench_simulator.py`` (all sizes) or
``python benchmarks/bench_simulator.py --fractions 0.01 --schedulers naive herald``;
``--scale 0.01`` runs a trace of 1% of those rows; ``--repeat N`` runs each case N times,
interleaved (every case once, then again), and ends with each case's median and range: on a
shared machine one run can be 40% off.
``--tree before=/path/to/old/checkout --tree after=.`` runs every case on each source tree (its
``platform``, ``pipelines`` and ``api`` folders first on ``PYTHONPATH``), interleaved case by
case, and ends with the trees side by side (wall seconds and the ratio to the first tree):
a before/after comparison in one run, under the same load.

Each (size, scheduler) runs in a fresh process so that its peak RSS is its own. The trace is the
synthetic Criteo-like generator at full Kaggle cardinalities (33.76 M rows), or with
``--datasets criteo-kaggle`` the built-in workload profile at full scale (docs/workloads.md);
8 workers × 256, caches of 10% of all rows, LRU. Generation time is measured in a separate pass and also
included in each run's wall time (the simulator consumes the stream as it is generated).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

KAGGLE_SAMPLES = 45_840_617
#: Generation alone: whole samples, and the ids a simulation reads.
GENERATION = ("generate-only", "generate-ids")


def open_trace(dataset: str, samples: int, scale: float = 1.0):
    """The benchmark's trace: the independent-fields generator or a workload profile, both at
    full Kaggle scale (``scale`` of its rows otherwise)."""
    from heraldbench.platform.data.synthetic import SyntheticCriteoSpec
    from heraldbench.platform.data.workload import SyntheticProfileSpec

    if dataset == "synthetic-criteo":
        return SyntheticCriteoSpec(kind="synthetic-criteo", samples=samples, scale=scale,
                                   seed=1).open()
    return SyntheticProfileSpec(profile=dataset, samples=samples, scale=scale, seed=1).open()


def run_one(fraction: float, kind: str, workers: int, batch: int, ratio: float,
            dataset: str = "synthetic-criteo", scale: float = 1.0) -> dict:
    from heraldbench.platform.schedulers import create
    from heraldbench.platform.sim import simulate

    samples = int(KAGGLE_SAMPLES * fraction)
    if kind in GENERATION:
        for _ in open_trace(dataset, 4096, scale).chunks(1024, kind == "generate-ids"):
            pass  # load the compiled kernels outside the timed run (and before its peak RSS)
    trace = open_trace(dataset, samples, scale)
    if kind in GENERATION:
        start, cpu_start = time.perf_counter(), time.thread_time()
        ids_only = kind == "generate-ids"  # what a simulation reads: no labels, no features
        ids = sum(chunk.ids.size for chunk in trace.chunks(1 << 16, ids_only))
        wall, cpu = time.perf_counter() - start, time.thread_time() - cpu_start
        # Generation runs on this one thread: its CPU time is the one-core figure, unaffected
        # by other load on a shared machine.
        return {"ids": ids, "wall_seconds": wall, "ids_per_second": ids / wall,
                "cpu_seconds": cpu, "ids_per_cpu_second": ids / cpu}
    _warm_up(kind, workers, batch, dataset)
    scheduler = create(kind, workers=workers, batch_size=batch, seed=0)
    cache_rows = int(ratio * trace.layout.total_rows)
    start, cpu_start = time.perf_counter(), time.process_time()
    result = simulate(trace, scheduler, cache_rows=cache_rows)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    c = result.counts
    return {
        "accesses": c.accesses,
        "wall_seconds": wall,
        # every thread of the process (the simulation and the trace's read-ahead): less moved
        # by other load on a shared machine than the wall time
        "cpu_seconds": cpu,
        "accesses_per_second": c.accesses / wall,
        "pull": c.pull,
        "push": c.push,
        "state_bytes": result.state_bytes,
    }


def _warm_up(kind: str, workers: int, batch: int, dataset: str) -> None:
    """Load (on a fresh tree: compile) the kernels on a tiny trace of the same kind, so JIT
    loading is not in the timed run: a profile's generator has kernels of its own (FAE's
    spilling pass makes the ids on several threads with another entry point)."""
    from heraldbench.platform.data.synthetic import SyntheticCriteoSpec
    from heraldbench.platform.data.workload import SyntheticProfileSpec
    from heraldbench.platform.schedulers import create
    from heraldbench.platform.sim import simulate

    samples = 4 * workers * batch
    if dataset == "synthetic-criteo":
        tiny = SyntheticCriteoSpec(kind="synthetic-criteo", samples=samples, scale=0.001)
    else:
        tiny = SyntheticProfileSpec(profile=dataset, samples=samples, scale=0.001)
    simulate(tiny.open(), create(kind, workers=workers, batch_size=batch), cache_rows=batch * 26)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.01, 0.1, 1.0])
    parser.add_argument("--schedulers", nargs="+", default=["naive", "herald"])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--cache-ratio", type=float, default=0.1)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="the trace's rows as a share of full Kaggle cardinalities")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each case (interleaved)")
    parser.add_argument("--datasets", nargs="+", default=["synthetic-criteo"],
                        help="synthetic-criteo and/or a workload profile (criteo-kaggle or a path)")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                        help="a source tree to run every case on (repeat to compare trees)")
    parser.add_argument("--skip-generation", action="store_true",
                        help="run only the schedulers, not the generation-alone cases")
    parser.add_argument("--one", nargs=2, metavar=("FRACTION", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    try:
        trees = _trees(args.tree)
    except ValueError as exc:
        parser.error(str(exc))
    if args.one:
        figures = run_one(float(args.one[0]), args.one[1], args.workers, args.batch_size,
                          args.cache_ratio, args.datasets[0], args.scale)
        figures["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        figures["source"] = os.path.dirname(sys.modules["heraldbench.platform"].__file__)
        print(json.dumps(figures))
        return
    rows = []
    for _ in range(args.repeat):
        for fraction in args.fractions:
            generation = [] if args.skip_generation else list(GENERATION)
            for kind in dict.fromkeys([*generation, *args.schedulers]):
                for dataset in args.datasets:
                    for tree, path in trees:
                        figures = _run_case(fraction, kind, dataset, args, path)
                        rows.append({"fraction": fraction, "scheduler": kind,
                                     "dataset": dataset, "tree": tree, **figures})
                        print(_line(rows[-1]), flush=True)
    if args.repeat > 1:
        print(_summary(rows))
    if len(trees) > 1:
        for metric in ("wall_seconds", "cpu_seconds"):
            print(_side_by_side(rows, [name for name, _ in trees], metric))
    print(json.dumps(rows, indent=1))


def _trees(given: list[str]) -> list[tuple[str, str | None]]:
    """(name, source folder) of each ``--tree NAME=PATH``; the installed code when none."""
    trees: list[tuple[str, str | None]] = []
    for item in given:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"--tree takes NAME=PATH, got {item!r}")
        if not os.path.isdir(os.path.join(path, "platform", "heraldbench")):
            raise ValueError(f"--tree {name}: {path} holds no platform/heraldbench folder")
        trees.append((name, os.path.abspath(path)))
    if len({name for name, _ in trees}) != len(trees):
        raise ValueError(f"--tree names must differ, got {[name for name, _ in trees]}")
    return trees or [("installed", None)]


def _side_by_side(rows: list[dict], names: list[str], metric: str = "wall_seconds") -> str:
    """Median ``metric`` (seconds) of each case per tree, and each tree's ratio to the first."""
    walls: dict[tuple[float, str, str], dict[str, list[float]]] = {}
    for row in rows:
        case = (row["fraction"], row["dataset"], row["scheduler"])
        walls.setdefault(case, {}).setdefault(row["tree"], []).append(row[metric])
    head = "".join(f"{name:>12}" for name in names)
    ratios = "".join(f"{name + '/' + names[0]:>16}" for name in names[1:])
    lines = [metric, f"{'fraction':>8} {'dataset':<17} {'scheduler':<22}{head}{ratios}"]
    for (fraction, dataset, kind), by_tree in walls.items():
        median = {t: statistics.median(v) for t, v in by_tree.items()}
        cells = "".join(f"{median.get(t, float('nan')):11.1f}s" for t in names)
        rel = "".join(f"{median.get(t, float('nan')) / median[names[0]]:16.3f}"
                      for t in names[1:])
        lines.append(f"{fraction:>8.1%} {dataset:<17} {kind:<22}{cells}{rel}")
    return "\n".join(lines)


def case_command(fraction: float, kind: str, dataset: str, args: argparse.Namespace) -> list[str]:
    """The command line of one case (``--one``): a Python process running this script."""
    return [sys.executable, __file__, "--one", str(fraction), kind,
            "--workers", str(args.workers), "--batch-size", str(args.batch_size),
            "--cache-ratio", str(args.cache_ratio), "--scale", str(args.scale),
            "--datasets", dataset]  # fmt: skip


def tree_env(tree: str | None) -> dict[str, str]:
    """This process's environment with the source tree ``tree``'s ``platform``, ``pipelines``
    and ``api`` folders first on ``PYTHONPATH`` (unchanged for None: the installed code)."""
    env = dict(os.environ)
    if tree is not None:
        folders = [os.path.join(tree, part) for part in ("platform", "pipelines", "api")]
        env["PYTHONPATH"] = os.pathsep.join([*folders, env.get("PYTHONPATH", "")])
    return env


def _run_case(fraction: float, kind: str, dataset: str, args: argparse.Namespace,
              tree: str | None = None) -> dict:
    """One case in a fresh process, so that its peak RSS is its own, on the code of ``tree``
    (a source folder) or the installed code."""
    cmd = case_command(fraction, kind, dataset, args)
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=tree_env(tree))
    return json.loads(done.stdout.strip().splitlines()[-1])


def _summary(rows: list[dict]) -> str:
    """Median and range of the wall seconds of each (fraction, scheduler, dataset, tree)."""
    walls: dict[tuple[float, str, str, str], list[float]] = {}
    for row in rows:
        case = (row["fraction"], row["scheduler"], row["dataset"], row.get("tree", ""))
        walls.setdefault(case, []).append(row["wall_seconds"])
    lines = ["median wall seconds [range] over the repeats:"]
    for (fraction, kind, dataset, tree), seconds in walls.items():
        lines.append(f"{fraction:>6.1%} {kind:<22} {dataset:<17} {tree:<10} "
                     f"{statistics.median(seconds):7.1f} s "
                     f"[{min(seconds):.1f}–{max(seconds):.1f}]")
    return "\n".join(lines)


def _line(row: dict) -> str:
    rate = row.get("accesses_per_second") or row.get("ids_per_second")
    return (f"{row['fraction']:>6.1%} {row['scheduler']:<22} {row['dataset']:<17} "
            f"{row.get('tree', ''):<10} "
            f"{row['wall_seconds']:7.1f} s "
            f"{rate / 1e6:6.1f} M/s  peak RSS {row['peak_rss_bytes'] / 2**30:5.2f} GiB")


if __name__ == "__main__":
    main()
