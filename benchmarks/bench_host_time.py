"""Where a training iteration's host time goes, by torch's profiler: plain PyTorch and the
emulated trainer under each scheduler, phase by phase, inside torch's operators and outside them.

Run: ``python benchmarks/bench_host_time.py --batch-size 4096 --samples 300000 --cache-ratio 0.5
--record host_time_4096`` (the trace, model and batches of ``bench_trainer.py``).

On a GPU, torch's operators are kernels the host queues and the device runs; what the host
does outside them (the decision stream, the slot bookkeeping of every cache move, Python) it
does alone, and no overlap hides more than the GPU's own time per iteration. So the host's own
time per iteration bounds a GPU run from below, whatever the GPU. Measured here on the CPU with
the rows moved by the GPU's code path (torch index kernels, as the tests run it on a CPU), so
that every row move is an operator and nothing else is. Each run is in line (no read-ahead
thread), so ``schedule`` is the whole decision stream. The profiler records every operator, which
adds to their time: compare the runs with each other, not with ``bench_trainer.py``.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import write_record
from bench_trainer import SCHEDULERS, _setup, add_workload_args

PHASE = "heraldbench/"


def phase_split(events, iterations: int) -> dict[str, dict[str, float]]:
    """ms per iteration of each phase: ``total``, ``in_operators`` (the phase's operators, with
    what they call) and ``host_own`` (the rest: Python, numpy, numba)."""
    total: dict[str, float] = defaultdict(float)
    inside: dict[str, float] = defaultdict(float)
    for event in events:
        if event.name.startswith(PHASE):
            total[event.name[len(PHASE):]] += event.cpu_time_total
        elif event.cpu_parent is not None and event.cpu_parent.name.startswith(PHASE):
            inside[event.cpu_parent.name[len(PHASE):]] += event.cpu_time_total
    per = 1e-3 / iterations  # µs over a run → ms per iteration
    return {
        phase: {"total": round(seconds * per, 3), "in_operators": round(inside[phase] * per, 3),
                "host_own": round((seconds - inside[phase]) * per, 3)}
        for phase, seconds in total.items() if phase != "evaluation"
    }  # fmt: skip


def profiled(train_once) -> dict:
    """One run under torch's profiler: its phases and the host's own ms per iteration."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        outcome = train_once()
    phases = phase_split(prof.events(), outcome.iterations)
    return {"iterations": outcome.iterations, "phases": phases,
            "host_own_ms": round(sum(p["host_own"] for p in phases.values()), 3),
            "host_own_ms_without_schedule": round(sum(
                p["host_own"] for name, p in phases.items() if name != "schedule"), 3)}  # fmt: skip


def _runs(train, held_out, settings, args):
    from heraldbench.platform.schedulers import create
    from heraldbench.platform.train import executor, train_plain, train_scheduler
    from heraldbench.platform.train.rows import RowStore

    # The GPU's code path for every row move (torch index kernels), run on this CPU.
    executor.RowStore = functools.partial(RowStore, host_kernels=False)
    yield "plain", lambda: train_plain(train, held_out, embedding_dim=args.dim,
                                       global_batch=args.workers * args.batch_size,
                                       settings=settings)  # fmt: skip
    cache_rows = max(1, int(args.cache_ratio * train.layout.total_rows))
    for kind in args.schedulers:
        def once(kind=kind):
            scheduler = create(kind, workers=args.workers, batch_size=args.batch_size, seed=0,
                               **SCHEDULERS.get(kind, {}))  # fmt: skip
            return train_scheduler(train, held_out, scheduler, cache_rows=cache_rows,
                                   embedding_dim=args.dim, settings=settings, prefetch=0)
        yield kind, once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_workload_args(parser)
    parser.add_argument("--record", metavar="NAME", help="also write benchmarks/results/NAME.json")
    args = parser.parse_args()
    args.device = "cpu"
    train, held_out, settings, facts = _setup(args)
    results = {}
    for name, once in _runs(train, held_out, settings, args):
        once()  # warm-up: numba compiles, allocator
        results[name] = profiled(once)
        row = results[name]
        print(f"{name:12s} host's own {row['host_own_ms']:8.2f} ms/iteration, of which the "
              f"decision stream {row['phases'].get('schedule', {}).get('host_own', 0.0):7.2f}; "
              + ", ".join(f"{k} {v['host_own']:.2f}/{v['total']:.2f}"
                          for k, v in row["phases"].items()), flush=True)  # fmt: skip
    if args.record:
        print(write_record(args.record, {"setup": facts, "results": results}))


if __name__ == "__main__":
    main()
