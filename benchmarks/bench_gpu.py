"""Training on CUDA: the emulated trainer and the distributed one (NCCL, one rank per GPU) side by
side (issue 17, item 7).

Run: ``python benchmarks/bench_gpu.py`` on a machine with CUDA, or e.g.
``python benchmarks/bench_gpu.py --samples 200000 --repeat 3 --json out.json``.

Both backends go through :func:`heraldbench.platform.training.train_experiment`, exactly what
``heraldbench train`` runs, on one spec: a synthetic-criteo trace, the reference DLRM, dim 16,
``--batch-size`` samples per worker and as many workers as GPUs (``--workers`` to set them; the
distributed backend needs a GPU per rank, the emulated one runs every worker on the first GPU).
Each configuration runs once to warm up (numba compiles, CUDA context, NCCL communicators), then
``--repeat`` times alternating backends, so drifting load hits both alike. Figures: samples/s of
training (evaluation excluded) per scheduler and backend, the median over repeats with min–max;
counts are checked equal between the backends (the decision stream is the same); AUC of the last
repeat.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

SCHEDULERS = ("naive", "herald", "het", "fae", "bagpipe", "herald-plus")
BACKENDS = ("emulated", "distributed")


def _spec(args, backend: str) -> dict:
    return {
        "name": "bench-gpu", "mode": "train",
        "dataset": {"kind": "synthetic-criteo", "samples": args.samples, "scale": args.scale,
                    "seed": 1},
        "cluster": {"workers": args.workers, "batch_size": args.batch_size},
        "cache": {"ratio": args.cache_ratio},
        "embedding_dim": args.dim,
        "schedulers": [{"kind": kind} for kind in args.schedulers],
        "train": {"model": args.model, "backend": backend, "device": args.device,
                  "eval_interval": 0},
    }  # fmt: skip


def _train(args, backend: str) -> dict[str, dict]:
    from heraldbench.platform.spec import parse_spec
    from heraldbench.platform.training import train_experiment

    start = time.perf_counter()
    result = train_experiment(parse_spec(_spec(args, backend)))
    print(f"  {backend}, {args.samples:,} samples: {time.perf_counter() - start:.1f} s", flush=True)
    return {
        run.label: {"samples_per_second": run.samples_per_second, "counts": run.counts,
                    "auc": run.metrics.get("auc"), "device": run.training.get("device"),
                    "backend": run.measured.get("backend", "emulated")}
        for run in result.runs
    }  # fmt: skip


def _summary(rounds: list[dict[str, dict[str, dict]]]) -> dict[str, dict[str, dict]]:
    summary: dict[str, dict[str, dict]] = {}
    for backend in BACKENDS:
        for label, last in rounds[-1][backend].items():
            figures = [r[backend][label]["samples_per_second"] for r in rounds]
            summary.setdefault(label, {})[backend] = {
                "samples_per_second": round(statistics.median(figures)),
                "min": round(min(figures)), "max": round(max(figures)),
                "auc": last["auc"], "device": last["device"], "backend": last["backend"],
            }  # fmt: skip
    for label, row in summary.items():
        counts = {repr(r[b][label]["counts"]) for r in rounds for b in BACKENDS}
        row["counts_equal"] = len(counts) == 1
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--workers", type=int, default=None, help="default: the GPUs there are")
    parser.add_argument("--batch-size", type=int, default=256, help="samples per worker")
    parser.add_argument("--cache-ratio", type=float, default=0.1)
    parser.add_argument("--model", default="reference", choices=["reference", "small"])
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--schedulers", nargs="+", default=list(SCHEDULERS))
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args()
    import torch

    if args.workers is None:
        args.workers = max(1, torch.cuda.device_count())
    facts = {"torch": torch.__version__, "gpus": torch.cuda.device_count(),
             "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
             **{k: v for k, v in vars(args).items() if k != "json"}}  # fmt: skip
    print(json.dumps(facts))
    warm = argparse.Namespace(**{**vars(args), "samples": min(args.samples, 5_000)})
    for backend in BACKENDS:
        _train(warm, backend)
    rounds = [{backend: _train(args, backend) for backend in BACKENDS}
              for _ in range(args.repeat)]  # fmt: skip
    summary = _summary(rounds)
    for label, row in summary.items():
        emulated, distributed = row["emulated"], row["distributed"]
        print(f"{label:14s} emulated {emulated['samples_per_second']:>9,} samples/s "
              f"({emulated['min']:,}–{emulated['max']:,}, AUC {emulated['auc']:.4f})  "
              f"{distributed['backend']} {distributed['samples_per_second']:>9,} samples/s "
              f"({distributed['min']:,}–{distributed['max']:,}, AUC {distributed['auc']:.4f})  "
              f"counts equal: {row['counts_equal']}")  # fmt: skip
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"facts": facts, "summary": summary, "rounds": rounds}, out, indent=1,
                      default=str)  # fmt: skip


if __name__ == "__main__":
    main()
