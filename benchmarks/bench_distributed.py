"""Distributed trainer throughput per scheduler against a plain data-parallel no-cache baseline
(issue 17, item 8).

Run: ``python benchmarks/bench_distributed.py`` (defaults below) or e.g.
``python benchmarks/bench_distributed.py --ranks 2 4 --samples 20000 --repeat 3 --json out.json``.

For each rank count W the benchmark starts W processes (gloo on CPU, one ``torch.distributed``
rank each, torch threads per rank as ``train: {backend: distributed}`` sets them: the machine's
cores // W, at least 1) and, inside those same processes:

* **baseline** (:mod:`_dist_baseline`): plain PyTorch data-parallel DLRM; every iteration each
  rank pulls the distinct rows its samples read from their owners in the sharded PS (row k on
  rank k mod W, as the trainer's PS), trains, all-reduces the dense gradients, and pushes its
  rows' SGD deltas back: no cache;
* **each scheduler**: the distributed trainer (:mod:`heraldbench.platform.distributed`, one
  ``_train_one`` per scheduler, exactly what ``heraldbench train`` runs on each rank), on the same
  materialised trace (generation is in neither figure), the same DLRM preset and seed, the same
  global batches (W × ``--batch-size``), the same threads;
* **naive, cache off**: the naive scheduler with the smallest cache the framework accepts, one
  iteration's working set of a worker (``cache: {rows: batch_size × fields}``): the framework's
  closest to the baseline's no cache. The framework overhead is this run against the baseline.

Warm-up first: every configuration runs once on the first 3 global batches (numba compiles the
scheduler kernels per process; allocator, gloo buffers), then ``--repeat`` rounds in which every
configuration runs right after a baseline run of its own, so drifting load on a shared machine
hits each pair alike. Samples/s is the training wall time on rank 0 (the trainer's
``samples_per_second``: evaluation excluded; the decision stream is computed on every rank,
inline where ranks share the cores, else in a read-ahead thread (``--read-ahead``), and its
time is inside the figure). CPU us/sample is every rank's process CPU time (all threads) while
training, summed, per sample: steadier than wall time on a shared machine. Figures are the
median over rounds, with the spread (min–max); speedups and the overhead are taken pair by pair,
then the median. The modelled speedup is the no-cache baseline's modelled iteration time over the
scheduler's, both from :func:`heraldbench.platform.timemodel.model_time` on the run's per-
iteration series (the baseline's: every distinct row of every worker pulled and pushed each
iteration) on the named ``--profile``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCHEDULERS = ("naive", "herald", "het", "fae", "bagpipe", "herald-plus")
NAIVE_OFF = "naive-cache-off"
BASELINE = "baseline"
WARMUP_ITERATIONS = 3


# ---- one rank --------------------------------------------------------------------------------


def _spec_document(args: dict, world: int) -> dict:
    return {
        "name": "bench-distributed",
        "mode": "train",
        "dataset": {"kind": "synthetic-criteo", "samples": args["samples"], "seed": 1,
                    "scale": args["scale"]},  # fmt: skip
        "cluster": {"workers": world, "batch_size": args["batch_size"]},
        "cache": {"ratio": args["cache_ratio"]},
        "embedding_dim": args["dim"],
        "schedulers": [{"kind": k} for k in args["schedulers"] if k != BASELINE]
        or [{"kind": "naive"}],
        "train": {"model": args["model"], "backend": "distributed", "device": "cpu",
                  "eval_fraction": args["eval_fraction"],
                  "distributed": {"schedule": args["schedule"]}},  # fmt: skip
    }


def _rank_main(folder: str, rank_text: str) -> int:
    """One rank: join the group, warm up, then the rounds; rank 0 writes the figures."""
    import datetime

    import torch
    import torch.distributed as dist

    root, rank = Path(folder), int(rank_text)
    job = pickle.loads((root / "job.pkl").read_bytes())
    args, world = job["args"], job["world"]
    dist.init_process_group("gloo", init_method=f"tcp://{job['master']}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=600))  # fmt: skip
    try:
        from heraldbench.platform.distributed import _driver
        from heraldbench.platform.train.runtime import configure_threads

        configure_threads(threads=job["threads"], reserve=1)  # as dist._driver.run_rank
        _driver.READ_AHEAD = {"auto": None, "on": True, "off": False}[args["read_ahead"]]
        read_ahead = _driver.reads_ahead(world, torch.device("cpu"))
        figures = _rounds(args, world, rank, root)
    finally:
        dist.destroy_process_group()
    if rank == 0:
        figures["threads"] = torch.get_num_threads()
        figures["read_ahead"] = read_ahead
        (root / "result.pkl").write_bytes(pickle.dumps(figures))
    return 0


def _rounds(args: dict, world: int, rank: int, root: Path) -> dict:
    from heraldbench.platform.distributed._rank import RankSetup
    from heraldbench.platform.spec import parse_spec
    from heraldbench.platform.train.split import split_trace, training_split

    spec = parse_spec(_spec_document(args, world))
    trace, held_out = training_split(spec, spec.dataset.open())
    trace = trace.materialize()
    warm = split_trace(trace, 0.01, WARMUP_ITERATIONS * world * args["batch_size"])[0]
    warm = warm.materialize()
    import torch

    setup = RankSetup(rank, world, world, torch.device("cpu"))
    configs = [NAIVE_OFF, *args["schedulers"]]
    log = _Log(rank)
    began = time.perf_counter()
    for name in [BASELINE, *configs]:  # warm-up: numba compiles, allocator, gloo
        _run(name, spec, setup, warm, held_out, args)
    log(f"W={world}: warm-up {time.perf_counter() - began:.1f} s")
    rounds = []
    for index in range(args["repeat"]):
        figures = {}
        for name in configs:
            paired = _run(BASELINE, spec, setup, trace, held_out, args)
            key = "baseline-a/a" if name == BASELINE else name
            figures[key] = _run(name, spec, setup, trace, held_out, args)
            if figures[key] is not None:
                figures[key]["paired_baseline"] = paired
        rounds.append(figures)
        if rank == 0:
            log(f"W={world} round {index + 1}: " + ", ".join(
                f"{k} {v['samples_per_second']:,.0f} "
                f"(base {v['paired_baseline']['samples_per_second']:,.0f})"
                for k, v in figures.items()))  # fmt: skip
    return {"rounds": rounds, "world": world}


class _Log:
    def __init__(self, rank: int) -> None:
        self.rank = rank

    def __call__(self, text: str) -> None:
        if self.rank == 0:
            print(text, flush=True)


def _run(name: str, spec, setup, trace, held_out, args: dict) -> dict | None:
    """One training of ``name`` on every rank; rank 0 returns its figures (None elsewhere)."""
    import torch.distributed as dist

    from heraldbench.platform.timemodel import model_time

    world, batch, dim = setup.world, args["batch_size"], args["dim"]
    if name == BASELINE:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _dist_baseline import train_baseline

        dist.barrier()
        out = train_baseline(trace, rank=setup.rank, world=world, batch_size=batch,
                             embedding_dim=dim, settings=spec.train)  # fmt: skip
        if setup.rank != 0:
            return None
        series = out.pop("series")
        out["iteration_s"] = out["train_s"] / max(1, out["iterations"])
    else:
        from heraldbench.platform.distributed._driver import _train_one
        from heraldbench.platform.schedulers import from_spec
        from heraldbench.platform.spec import scheduler_specs

        kind = "naive" if name == NAIVE_OFF else name
        sched_spec = next(s for s, _ in scheduler_specs(spec) if s.kind == kind)
        scheduler = from_spec(sched_spec, workers=world, batch_size=batch, seed=spec.seed)
        if name == NAIVE_OFF:  # the smallest cache the framework takes: one iteration's ids
            cache_rows = batch * trace.layout.num_tables
        else:
            cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, dim)
        dist.barrier()
        profile = os.environ.get("BENCH_DIST_PROFILE", "")  # NAME:PATH, rank 0's cProfile
        warm = trace.num_samples <= WARMUP_ITERATIONS * world * batch
        if setup.rank == 0 and profile.split(":")[0] == name and not warm:
            import cProfile

            with cProfile.Profile() as prof:
                outcome = _train_one(spec, setup, trace, held_out, scheduler, cache_rows, None)
            prof.dump_stats(profile.split(":", 1)[1])
        else:
            outcome = _train_one(spec, setup, trace, held_out, scheduler, cache_rows, None)
        if setup.rank != 0:
            return None
        measured = outcome.info["measured"]
        series = outcome.series
        out = {
            "samples": outcome.samples_trained,
            "iterations": outcome.iterations,
            "train_s": outcome.timing["train"],
            "samples_per_second": outcome.samples_per_second,
            "iteration_s": measured["iteration_s"],
            "seconds": measured["seconds"],
            "cache_rows": cache_rows,
            "auc": outcome.final.auc,
            "network_bytes": measured["bytes"]["network"],
            "cpu_s": sum(r["cpu_s"] for r in measured["per_rank"]),
        }
    modelled = model_time(series, workers=world, batch_size=batch, embedding_dim=dim,
                          profile=args["profile"])  # fmt: skip
    out["modelled_iteration_s"] = modelled.mean_iteration_s
    return out


# ---- the launcher ----------------------------------------------------------------------------


def _launch(args: argparse.Namespace, world: int) -> dict:
    from heraldbench.platform.distributed.launch import _die_with_parent, free_port, stop

    threads = max(1, (os.cpu_count() or 1) // world)  # as dist.launch.launch_local
    job = {"args": vars(args), "world": world, "master": f"127.0.0.1:{free_port()}",
           "threads": threads}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-distributed-") as folder:
        root = Path(folder)
        (root / "job.pkl").write_bytes(pickle.dumps(job))
        procs = []
        for rank in range(world):
            out = None if rank == 0 else open(root / f"rank-{rank}.log", "wb")  # noqa: SIM115
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "--rank-worker", folder, str(rank)],
                stdout=out, stderr=subprocess.STDOUT if out else None,
                preexec_fn=_die_with_parent, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            ))  # fmt: skip
        try:
            while True:
                codes = [p.poll() for p in procs]
                if any(c not in (None, 0) for c in codes):
                    bad = next(r for r, c in enumerate(codes) if c not in (None, 0))
                    tail = ""
                    if bad:
                        tail = (root / f"rank-{bad}.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"rank {bad} exited with {codes[bad]}\n{tail}")
                if all(c == 0 for c in codes):
                    break
                time.sleep(0.2)
        finally:
            stop(procs)
        return pickle.loads((root / "result.pkl").read_bytes())


# ---- the summary -----------------------------------------------------------------------------


def _spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _cpu(f: dict) -> float:
    """CPU microseconds per sample, all ranks' processes (every thread) while training."""
    return f["cpu_s"] / f["samples"] * 1e6 if f["samples"] else float("nan")


def _summarise(result: dict) -> dict:
    rounds = result["rounds"]
    rows = {}
    base = [f["paired_baseline"] for r in rounds for f in r.values()]
    rows[BASELINE] = {
        "samples_per_second": _spread([b["samples_per_second"] for b in base]),
        "real_speedup": None,
        "modelled_speedup": 1.0,
        "cpu_us_per_sample": statistics.median(_cpu(b) for b in base),
        "seconds": {k: statistics.median(b["seconds"][k] for b in base)
                    for k in base[0]["seconds"]},  # fmt: skip
    }
    for name in rounds[0]:
        runs = [r[name] for r in rounds]
        rows[name] = {
            "samples_per_second": _spread([f["samples_per_second"] for f in runs]),
            "real_speedup": _spread([f["samples_per_second"]
                                     / f["paired_baseline"]["samples_per_second"] for f in runs]),
            "modelled_speedup": statistics.median(
                f["paired_baseline"]["modelled_iteration_s"] / f["modelled_iteration_s"]
                for f in runs),  # fmt: skip
            "seconds": {k: statistics.median(f["seconds"][k] for f in runs)
                        for k in runs[0]["seconds"]},  # fmt: skip
            "cpu_us_per_sample": statistics.median(_cpu(f) for f in runs),
            "iterations": runs[0]["iterations"],
            "cache_rows": runs[0].get("cache_rows"),
            "auc": runs[-1].get("auc"),
        }
        if name == NAIVE_OFF:
            rows[name]["overhead_vs_baseline"] = _spread([
                f["paired_baseline"]["samples_per_second"] / f["samples_per_second"] - 1
                for f in runs])  # fmt: skip
            rows[name]["cpu_overhead_vs_baseline"] = _spread([
                _cpu(f) / _cpu(f["paired_baseline"]) - 1 for f in runs])  # fmt: skip
    return rows


def _table(summaries: dict[int, dict], profile: str) -> str:
    head = (f"{'scheduler':16s} {'ranks':>5s} {'samples/s':>10s} {'spread':>15s} "
            f"{'real x':>7s} {'modelled x':>10s} {'CPU us/sample':>13s}  "
            f"{'phases (s, rank mean)':s}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for world, rows in summaries.items():
        for name, row in rows.items():
            sps = row["samples_per_second"]
            real = row["real_speedup"]
            phases = " ".join(f"{k} {v:.2f}" for k, v in row["seconds"].items() if v >= 0.005)
            lines.append(
                f"{name:16s} {world:5d} {sps['median']:10,.0f} "
                f"{sps['min']:7,.0f}-{sps['max']:<7,.0f} "
                f"{'-' if real is None else format(real['median'], '.2f'):>7s} "
                f"{row['modelled_speedup']:10.2f} {row['cpu_us_per_sample']:13,.0f}  {phases}"
            )  # fmt: skip
    lines.append(f"real x: samples/s over the paired baseline run's (median of rounds); "
                 f"modelled x: model_time on '{profile}', baseline iteration over the run's; "
                 f"CPU us/sample: all ranks' CPU time while training")
    for world, rows in summaries.items():
        over = rows[NAIVE_OFF]["overhead_vs_baseline"]
        cpu = rows[NAIVE_OFF]["cpu_overhead_vs_baseline"]
        lines.append(
            f"framework overhead, W={world}: naive (cache {rows[NAIVE_OFF]['cache_rows']:,} rows "
            f"= one iteration's ids) vs baseline: {over['median']:+.1%} "
            f"(rounds {over['min']:+.1%} .. {over['max']:+.1%}; target <= +25%); in CPU time "
            f"per sample {cpu['median']:+.1%} ({cpu['min']:+.1%} .. {cpu['max']:+.1%})"
        )  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--batch-size", type=int, default=256, help="samples per rank")
    parser.add_argument("--cache-ratio", type=float, default=0.1)
    parser.add_argument("--model", default="reference", choices=["reference", "small"])
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--eval-fraction", type=float, default=0.02)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", default="tcp-100g", help="time-model profile")
    parser.add_argument("--schedulers", nargs="+", default=list(SCHEDULERS),
                        help="'baseline' among them: an A/A control (the baseline vs itself)")
    parser.add_argument("--read-ahead", default="auto", choices=["auto", "on", "off"],
                        help="the trainer's decision stream in a read-ahead thread (auto: the "
                        "trainer's rule, dist._driver.reads_ahead)")
    parser.add_argument("--schedule", default="auto", choices=["auto", "ahead", "inline"],
                        help="when each rank replays the scheduler (train.distributed.schedule)")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args()
    import platform

    import torch

    facts = {"argv": sys.argv[1:], "cpus": os.cpu_count(),
             "cpu": platform.processor() or platform.machine(), "torch": torch.__version__,
             "load_avg": os.getloadavg()}  # fmt: skip
    print(json.dumps(facts), flush=True)
    summaries, raw = {}, {}
    for world in args.ranks:
        began = time.perf_counter()
        raw[world] = _launch(args, world)
        summaries[world] = _summarise(raw[world])
        print(f"W={world}: {time.perf_counter() - began:.0f} s, torch threads per rank "
              f"{raw[world]['threads']}, decision stream read ahead: {raw[world]['read_ahead']}",
              flush=True)  # fmt: skip
    print(_table(summaries, args.profile))
    if args.json:
        document = {"setup": facts | {"load_avg_end": os.getloadavg()},
                    "summary": {str(w): s for w, s in summaries.items()},
                    "rounds": {str(w): r["rounds"] for w, r in raw.items()}}  # fmt: skip
        Path(args.json).write_text(json.dumps(document, indent=1, default=float))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--rank-worker":
        sys.exit(_rank_main(sys.argv[2], sys.argv[3]))
    main()
