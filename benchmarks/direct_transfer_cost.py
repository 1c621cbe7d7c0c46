"""What herald-plus's direct transfers move, next to what its counts price (docs/semantics.md,
"Direct transfers, priced").

A direct transfer is counted as one row, its reader's pull; it also hands the writer's pending
delta over (a second row of payload, which the distributed trainer moves). This replays the
decision stream of a spec's herald-plus under both consistency rules and prints rows relative to
naive's: counted (pulls + pushes, the simulator's ``overall``) and moved (with each handed-over
delta).

Run: ``python benchmarks/direct_transfer_cost.py [--spec examples/comparison.yaml]
[--samples N]`` (default: the spec's own samples).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import yaml

from heraldbench.platform.counters import Tally, tally_of
from heraldbench.platform.schedulers import create, from_spec
from heraldbench.platform.sim import decisions, simulate
from heraldbench.platform.spec import parse_spec


def measure(document: dict, consistency: str) -> dict[str, float]:
    spec = parse_spec({**document, "schedulers": [{"kind": "herald-plus"}],
                       "consistency": consistency})  # fmt: skip
    trace = spec.dataset.open()
    rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    cluster = {"workers": spec.cluster.workers, "batch_size": spec.cluster.batch_size,
               "seed": spec.seed}  # fmt: skip
    scheduler = from_spec(spec.schedulers[0], **cluster)
    pulls = pushes = direct = handed = 0
    start = time.perf_counter()
    for dec in decisions(trace, scheduler, cache_rows=rows, policy=spec.cache.policy,
                         consistency=consistency):  # fmt: skip
        tally = tally_of(dec, spec.cluster.workers)
        pulls += int(tally[Tally.MISS_PULL] + tally[Tally.UPDATE_PULL])
        pushes += int(tally[Tally.EVICT_PUSH] + tally[Tally.UPDATE_PUSH])
        direct += int(tally[Tally.DIRECT])
        handed += int(np.count_nonzero(dec.handed_carry))
    naive = simulate(trace, create("naive", **cluster), cache_rows=rows,
                     policy=spec.cache.policy, consistency=consistency).counts  # fmt: skip
    baseline = naive.pull + naive.push
    return {"pulls": pulls, "pushes": pushes, "direct": direct, "handed_deltas": handed,
            "counted": (pulls + pushes) / baseline,
            "moved": (pulls + pushes + handed) / baseline,
            "seconds": time.perf_counter() - start}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="examples/comparison.yaml")
    parser.add_argument("--samples", type=int, default=None)
    args = parser.parse_args()
    with open(args.spec) as handle:
        document = yaml.safe_load(handle)
    if args.samples:
        document["dataset"]["samples"] = args.samples
    print("| consistency | direct transfers | deltas handed over | counted / naive | moved / naive |")
    print("|---|---:|---:|---:|---:|")
    for consistency in ("strict", "optimistic"):
        r = measure(document, consistency)
        print(f"| {consistency} | {r['direct']:,} | {r['handed_deltas']:,} | {r['counted']:.3f} | "
              f"{r['moved']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
