"""The decision stream read ahead beside a consumer that, like a trainer on a GPU, spends its
iteration on the host (Python, or queueing short torch operators): side by side, or in turns?

Run: ``python benchmarks/bench_read_ahead.py --record read_ahead``.

The stream's numba kernels and numpy calls release the GIL and take it back, many times per
iteration. With CPython's default switch interval (5 ms), each time the stream asks for it back
it can wait that long while the consumer holds it; ``read_ahead`` shortens the wait while it runs
(``SWITCH_INTERVAL_S``). Two consumers: ``python``, a loop of Python steps that holds the GIL (the
host's own work), and ``torch``, short torch operators. Measured per scheduler on the trace and
batches of ``bench_trainer.py --batch-size 4096 --samples 300000 --cache-ratio 0.5``: the stream
alone, the consumer alone, and the two together through ``read_ahead`` with each switch interval,
in ms per iteration, medians over ``--repeat``. Perfect overlap gives the larger of the two alone;
none gives their sum.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import write_record

DEFAULT_SWITCH_S = 0.005  # CPython's


def _stream(train, kind: str, args):
    from heraldbench.platform.schedulers import create
    from heraldbench.platform.sim import decisions

    knobs = {"bound": 100} if kind == "het" else {}
    scheduler = create(kind, workers=args.workers, batch_size=args.batch_size, seed=0, **knobs)
    return decisions(train, scheduler, cache_rows=int(args.cache_ratio * train.layout.total_rows))


def _ms_per_item(items, consume, count: int) -> float:
    start = time.perf_counter()
    for item in items:
        consume(item)
    return (time.perf_counter() - start) / count * 1e3


def _consumer(kind: str, steps: int):
    """Work per item: ``steps`` Python steps, or ``steps // 40`` short torch operators (about as
    long here)."""
    import torch

    scratch = torch.zeros(16)

    def python(_item) -> None:
        total = 0
        for step in range(steps):
            total += step

    def operators(_item) -> None:
        for _ in range(steps // 40):
            scratch.add_(1.0)

    return python if kind == "python" else operators


def measure(train, kind: str, consumer: str, args) -> dict[str, float]:
    from heraldbench.platform.data import _readahead, read_ahead

    consume = _consumer(consumer, args.steps)

    count = sum(1 for _ in _stream(train, kind, args))  # also compiles the scheduler's kernels
    row = {"iterations": count,
           "stream_alone": _ms_per_item(_stream(train, kind, args), lambda _: None, count),
           "consumer_alone": _ms_per_item(range(count), consume, count)}  # fmt: skip
    shortened = _readahead.SWITCH_INTERVAL_S
    try:
        for label, interval in (("together_default_switch", DEFAULT_SWITCH_S),
                                ("together_read_ahead_switch", shortened)):
            _readahead.SWITCH_INTERVAL_S = interval  # min(process's 5 ms, this) while it runs
            row[label] = _ms_per_item(read_ahead(_stream(train, kind, args), 2), consume, count)
    finally:
        _readahead.SWITCH_INTERVAL_S = shortened
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300_000)
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=4096)
    parser.add_argument("--cache-ratio", type=float, default=0.5)
    parser.add_argument("--steps", type=int, default=400_000,
                        help="the consumer's Python steps per iteration (a 40th as operators)")
    parser.add_argument("--consumers", nargs="+", default=["python", "torch"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--schedulers", nargs="+",
                        default=["naive", "herald", "herald-plus", "het", "fae"])
    parser.add_argument("--record", metavar="NAME", help="also write benchmarks/results/NAME.json")
    args = parser.parse_args()

    import torch

    from heraldbench.platform.data import _readahead
    from heraldbench.platform.data.synthetic import SyntheticCriteoSpec
    from heraldbench.platform.train import split_trace

    torch.set_num_threads(1)  # one core for each thread
    shortened = _readahead.SWITCH_INTERVAL_S
    trace = SyntheticCriteoSpec(samples=args.samples, scale=args.scale, seed=1).open()
    train, _ = split_trace(trace.materialize(), 0.02, None)
    results = {}
    for kind in args.schedulers:
        for consumer in args.consumers:
            runs = []
            for _ in range(args.repeat):
                runs.append(measure(train, kind, consumer, args))
            row = {key: round(statistics.median(r[key] for r in runs), 2) for key in runs[0]}
            row["runs"] = [{key: round(value, 2) for key, value in r.items()} for r in runs]
            results.setdefault(kind, {})[consumer] = row
            print(kind, consumer, row, flush=True)
    setup = {"samples": args.samples, "scale": args.scale, "workers": args.workers,
             "batch_size": args.batch_size, "cache_ratio": args.cache_ratio,
             "python_steps": args.steps, "torch_operators": args.steps // 40,
             "repeat": args.repeat,
             "switch_intervals_s": {"default": DEFAULT_SWITCH_S, "read_ahead": shortened}}  # fmt: skip
    if args.record:
        print(write_record(args.record, {"setup": setup, "results": results}))


if __name__ == "__main__":
    main()
