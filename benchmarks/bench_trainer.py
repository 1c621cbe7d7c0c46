"""Trainer throughput: the emulated cluster under each scheduler against plain PyTorch.

Run: ``python benchmarks/bench_trainer.py`` (defaults below) or e.g.
``python benchmarks/bench_trainer.py --samples 100000 --rounds 5 --schedulers naive herald``.

Side by side in one process, on the same in-memory trace (generated once, so generation is in
neither figure), the same device, the same DLRM (reference preset, dim 16) and the same global
batches:

* **plain**: one ``nn.Embedding`` (sparse gradients) + SGD, no cache emulation;
* **each scheduler**: the executor replaying the scheduler's decision stream (W caches, the PS,
  pulls, pushes, evictions, consistency checks).

Runs are interleaved round by round after one warm-up round: in each round every scheduler runs
right after a plain run of its own, ``--rounds`` times, and each figure is the median over rounds,
so drifting load on a shared machine hits all of them alike. The overhead of the emulation is
``plain samples/s ÷ scheduler samples/s − 1`` (target ≤ 25%), taken for each back-to-back pair
and then the median over rounds. The executor's wall time is split into schedule (waiting for the
decision stream), input (batch to device), movement (pulls, pushes, evictions) and compute
(forward, backward, updates), each the host's time; on a GPU, ``drain`` is the wait for the
kernels the host queued ahead, and ``--sync-phases`` waits at the end of every phase instead
(each phase then pays for its own kernels, and host and GPU no longer overlap); evaluation is
excluded from every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import write_record

SCHEDULERS = {
    "naive": {},
    "herald": {},
    "herald-plus": {},
    "het": {"bound": 100},
    "fae": {},
}


def _setup(args):
    import torch

    from heraldbench.platform.data.synthetic import SyntheticCriteoSpec
    from heraldbench.platform.spec import TrainSpec
    from heraldbench.platform.train import configure_threads, split_trace

    threads = configure_threads(args.threads)
    start = time.perf_counter()
    source = SyntheticCriteoSpec(samples=args.samples, scale=args.scale, seed=1).open()
    trace = source.materialize()
    generated = time.perf_counter() - start
    train, held_out = split_trace(trace, 0.02, args.train_samples)
    settings = TrainSpec(model=args.model, device=args.device)
    facts = {
        "samples_trained": train.num_samples, "rows": trace.layout.total_rows,
        "workers": args.workers, "batch_size": args.batch_size, "cache_ratio": args.cache_ratio,
        "model": args.model, "embedding_dim": args.dim, "threads": threads,
        "device": str(torch.device("cuda" if args.device == "cuda" or (
            args.device == "auto" and torch.cuda.is_available()) else "cpu")),
        "generation_seconds": round(generated, 2), "torch": torch.__version__,
    }  # fmt: skip
    return train, held_out, settings, facts


def _plain(train, held_out, settings, args) -> dict:
    from heraldbench.platform.train import train_plain

    outcome = train_plain(train, held_out, global_batch=args.workers * args.batch_size,
                          embedding_dim=args.dim, settings=settings,
                          sync_phases=args.sync_phases)  # fmt: skip
    return {"samples_per_second": outcome.samples_per_second, "timing": outcome.timing,
            "auc": outcome.final.auc}  # fmt: skip


def _scheduled(kind, train, held_out, settings, args) -> dict:
    from heraldbench.platform.schedulers import create
    from heraldbench.platform.train import train_scheduler

    scheduler = create(kind, workers=args.workers, batch_size=args.batch_size, seed=0,
                       **SCHEDULERS.get(kind, {}))  # fmt: skip
    cache_rows = max(1, int(args.cache_ratio * train.layout.total_rows))
    outcome = train_scheduler(train, held_out, scheduler, cache_rows=cache_rows,
                              embedding_dim=args.dim, settings=settings,
                              prefetch=args.prefetch, sync_phases=args.sync_phases)  # fmt: skip
    return {"samples_per_second": outcome.samples_per_second, "timing": outcome.timing,
            "auc": outcome.final.auc, "pull": outcome.counts.pull, "push": outcome.counts.push}


def _one_round(train, held_out, settings, args) -> dict[str, dict]:
    """Each scheduler right after a plain run of its own, its ``paired_plain``."""
    figures = {"plain": _plain(train, held_out, settings, args)}
    for kind in args.schedulers:
        plain = _plain(train, held_out, settings, args)
        figures[kind] = _scheduled(kind, train, held_out, settings, args)
        figures[kind]["paired_plain"] = plain["samples_per_second"]
    return figures


def _summarise(rounds: list[dict[str, dict]]) -> dict[str, dict]:
    names = list(rounds[0])
    plain = statistics.median(r["plain"]["samples_per_second"] for r in rounds)
    summary = {}
    for name in names:
        sps = statistics.median(r[name]["samples_per_second"] for r in rounds)
        phases = {
            phase: statistics.median(r[name]["timing"].get(phase, 0.0) for r in rounds)
            for phase in ("schedule", "input", "movement", "compute", "drain", "train")
        }
        train = phases["train"]
        # Paired per round: a burst of load on a shared machine hits neighbouring runs alike.
        paired = statistics.median(
            r[name].get("paired_plain", r["plain"]["samples_per_second"])
            / r[name]["samples_per_second"] - 1
            for r in rounds
        )
        summary[name] = {
            "samples_per_second": round(sps),
            "overhead_vs_plain": round(paired, 4),
            "overhead_of_medians": round(plain / sps - 1, 4),
            "split_seconds": {k: round(v, 3) for k, v in phases.items()},
            "split_share": {k: round(v / train, 3) for k, v in phases.items() if k != "train"},
            "auc": round(rounds[-1][name]["auc"], 4),
            "all_samples_per_second": [round(r[name]["samples_per_second"]) for r in rounds],
        }
    return summary


def _line(name: str, row: dict) -> str:
    share = row["split_share"]
    return (f"{name:12s} {row['samples_per_second']:>9,} samples/s  overhead "
            f"{row['overhead_vs_plain']:+7.1%}  schedule {share['schedule']:5.1%}  "
            f"movement {share['movement']:5.1%}  compute {share['compute']:5.1%}  "
            f"input {share['input']:5.1%}  drain {share['drain']:5.1%}  "
            f"AUC {row['auc']:.4f}")  # fmt: skip


def add_workload_args(parser: argparse.ArgumentParser) -> None:
    """The trace, model, cluster and schedulers of a trainer benchmark (``_setup``'s args)."""
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--cache-ratio", type=float, default=0.1)
    parser.add_argument("--model", default="reference", choices=["reference", "small"])
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--schedulers", nargs="+", default=list(SCHEDULERS))
    parser.add_argument("--train-samples", type=int, default=None,
                        help="train on at most this many samples (the same held-out samples)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_workload_args(parser)
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--prefetch", type=int, default=2, help="decisions computed ahead; 0: none")
    parser.add_argument("--sync-phases", action="store_true",
                        help="on a GPU, wait for each phase's kernels (a profile; no overlap)")
    parser.add_argument("--record", metavar="NAME",
                        help="also write benchmarks/results/NAME.json")
    parser.add_argument("--one", metavar="KIND", help=argparse.SUPPRESS)
    args = parser.parse_args()
    train, held_out, settings, facts = _setup(args)
    if args.one:  # one scheduler's run, no warm-up, no plain run (bench_instructions.py)
        figures = _scheduled(args.one, train, held_out, settings, args)
        figures["source"] = os.path.dirname(sys.modules["heraldbench.platform"].__file__)
        print(json.dumps({**facts, **{k: v for k, v in figures.items() if k != "timing"}}))
        return
    print(json.dumps(facts), flush=True)
    _one_round(train, held_out, settings, args)  # warm-up: numba compiles, allocator, caches
    rounds = []
    for index in range(args.rounds):
        rounds.append(_one_round(train, held_out, settings, args))
        print(f"round {index + 1}: " + ", ".join(
            f"{k} {v['samples_per_second']:,.0f}" for k, v in rounds[-1].items()), flush=True)
    summary = _summarise(rounds)
    iterations = max(1, facts["samples_trained"] // (args.workers * args.batch_size))
    for name, row in summary.items():
        row["ms_per_iteration"] = {k: round(v / iterations * 1e3, 2)
                                   for k, v in row["split_seconds"].items()}  # fmt: skip
        print(_line(name, row))
    print(json.dumps({"setup": facts, "results": summary}, indent=1))
    if args.record:
        print(write_record(args.record, {"setup": facts, "results": summary}))


if __name__ == "__main__":
    main()
