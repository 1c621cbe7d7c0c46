"""Equality, measured: heraldbench's variants beside Herald's and HET's released code on a
generated criteo-kaggle trace and on a real public trace (docs/conformance.md).

For each trace and cache size: Herald (partitions, sync plans and counts per iteration) and HET
(counts per iteration under LRU, LFU and LFUOpt at bounds 0, 1 and 100), each under
``variant: released`` and ``normative``. Prints one line per comparison and writes every report
as JSON.

Run: ``python benchmarks/conformance_equality.py --herald PATH --het PATH
[--samples 100000] [--scale 1] [--caches 0.01,0.1 (empty: none)] [--trace FILE --kind KIND
--trace-caches 0.05,0.1 --trace-cluster 8x256] [--out reports.json]``. Builds go to
``$HERALDBENCH_HOME/conformance``.
``--breakdown`` instead simulates heraldbench's ``herald`` with Herald's released choices added
one at a time (no released code needed); ``--loader-rounding`` runs the released scheduler on
the generated trace's ids and on them rounded as its Python side rounds them.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from heraldbench.platform.conformance import cache_root, herald, het
from heraldbench.platform.conformance._checkout import trace_ids
from heraldbench.platform.contract import ReadRules, RunPlan
from heraldbench.platform.schedulers import HeraldSpec, from_spec
from heraldbench.platform.sim import simulate
from heraldbench.platform.spec import parse_spec
from heraldbench.platform.trace_files import DEFAULT_MAX_SAMPLES, dataset_of_file

POLICIES = ("lru", "lfu", "lfuopt")
BOUNDS = (0, 1, 100)
VARIANTS = ("released", "normative")
#: Herald's released choices taken one at a time, each on top of those before it (--breakdown):
#: (label, consistency, read rules); the last is ``variant: released``.
STEPS = (
    ("normative", "strict", ReadRules()),
    ("+ co-writers stay valid", "optimistic", ReadRules()),
    ("+ ascending touch order", "optimistic", ReadRules(ascending=True)),
    ("+ eviction on insert", "optimistic", ReadRules(ascending=True, evict_on_insert=True)),
    ("+ pushed and read: update pull", "optimistic",
     ReadRules(ascending=True, evict_on_insert=True, reread_pushed=True)),
)


def comparisons(dataset: dict[str, Any], cluster: dict[str, int], ratios: list[float],
                systems: dict[str, Path]) -> list[dict[str, Any]]:  # fmt: skip
    """Every comparison on one trace; one spec (and trace) per cache size."""
    reports = []
    for ratio in ratios:
        base = {"name": "equality", "dataset": dataset, "cluster": cluster,
                "cache": {"ratio": ratio}}  # fmt: skip
        trace = parse_spec({**base, "schedulers": [{"kind": "naive"}]}).dataset.open()
        entries = [(herald, {"kind": "herald"})] if "herald" in systems else []
        if "het" in systems:
            entries += [(het, {"kind": "het", "policy": policy, "bound": bound})
                        for policy in POLICIES for bound in BOUNDS]  # fmt: skip
        for variant in VARIANTS:
            for module, entry in entries:
                spec = parse_spec({**base, "schedulers": [entry]})
                system = module.__name__.rsplit(".", 1)[1]
                reports.append(_run(module, systems[system], spec, trace, variant, ratio))
    return reports


def _run(module, reference: Path, spec, trace, variant: str, ratio: float) -> dict[str, Any]:
    commit = module.check_reference(reference)
    system = module.__name__.rsplit(".", 1)[1]
    start = time.perf_counter()
    report = module.compare(reference, spec, trace, variant=variant,
                            cache_dir=cache_root() / f"{system}-{(commit or 'no-git')[:12]}")
    doc = report.to_json() | {"cache_ratio": ratio, "seconds": time.perf_counter() - start}
    first = report.first_difference
    knobs = report.setting["scheduler"]
    label = system if system == "herald" else f"het {knobs['policy']} bound {knobs['bound']}"
    totals = {k: v for k, v in report.totals.items() if not k.endswith("agrees")}
    decided = {k: f"{a}/{n}" for k, (a, n) in report.totals.items() if k.endswith("agrees")}
    print(f"{label:24} {variant:9} cache {ratio:<5} agrees={report.agrees!s:5} "
          f"{decided} totals(heraldbench, released)={totals}"
          + ("" if first is None else f" first: {first.what} at {first.iteration}"), flush=True)
    return doc


def breakdown(dataset: dict[str, Any], cluster: dict[str, int], ratios: list[float]) -> None:
    """heraldbench's ``herald`` (LRU) with Herald's released choices added one at a time."""
    for ratio in ratios:
        spec = parse_spec({"name": "steps", "dataset": dataset, "cluster": cluster,
                           "cache": {"ratio": ratio}, "schedulers": [{"kind": "herald"}]})
        trace = spec.dataset.open()
        rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
        scheduler = from_spec(HeraldSpec(), workers=cluster["workers"],
                              batch_size=cluster["batch_size"])  # fmt: skip
        for label, consistency, rules in STEPS:
            plan = RunPlan(trace, cache_policy="lru", consistency=consistency, reads=rules)
            counts = simulate(trace, scheduler, cache_rows=rows, plan=plan).counts
            print(f"cache {ratio:<5} {label:32} miss {counts.miss_pull:>9,.0f}  update pull "
                  f"{counts.update_pull:>9,.0f}  evict push {counts.evict_push:>8,.0f}  update "
                  f"push {counts.update_push:>9,.0f}", flush=True)


def loader_rounding(systems: dict[str, Path], dataset: dict[str, Any], cluster: dict[str, int],
                    ratios: list[float]) -> None:  # fmt: skip
    """The released code on the trace's ids, and on them as its Python side hands them over
    (Herald's laia_dataloader.py and HET's ``embedding_lookup_raw`` take them through float32,
    which rounds ids of 2^24 and more): Herald's partitions and counts, HET's counts (LRU,
    bound 100)."""
    for ratio in ratios:
        spec = parse_spec({"name": "rounding", "dataset": dataset, "cluster": cluster,
                           "cache": {"ratio": ratio}, "schedulers": [{"kind": "het"}]})
        trace = spec.dataset.open()
        rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
        ids = trace_ids(trace)
        rounded = ids.astype(np.float32).astype(np.int64)
        print(f"cache {ratio}: ids changed {np.count_nonzero(rounded != ids):,} of {ids.size:,}, "
              f"rows merged {np.unique(ids).size - np.unique(rounded).size:,}", flush=True)
        for system, reference in systems.items():
            commit = (herald if system == "herald" else het).check_reference(reference)
            cache_dir = cache_root() / f"{system}-{(commit or 'no-git')[:12]}"
            if system == "herald":
                runs = [herald.released_run(reference, x, workers=cluster["workers"],
                                            batch_size=cluster["batch_size"], cache_rows=rows,
                                            cache_dir=cache_dir) for x in (ids, rounded)]
                same = sum(np.array_equal(a, b) for a, b in zip(runs[0].assign, runs[1].assign))
                print(f"  herald: partitions equal {same}/{len(runs[0].assign)}", flush=True)
                counts = [run.counts for run in runs]
            else:
                assign, _, _ = het.heraldbench_run(spec, trace, spec.schedulers[0], rows)
                counts = [het.released_run(reference, x, assign, rows=trace.layout.total_rows,
                                           cache_rows=rows, policy="lru", bound=100,
                                           cache_dir=cache_dir) for x in (ids, rounded)]
            exact, loaded = ({k: int(np.sum(v)) for k, v in c.items()} for c in counts)
            print(f"  {system}: exact ids {exact}; as loaded {loaded}", flush=True)


def _ratios(text: str) -> list[float]:
    """Cache ratios from ``0.01,0.1`` (none from an empty string)."""
    return [float(r) for r in text.split(",") if r.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--herald", type=Path, help="a checkout of HKUST-SING/herald")
    parser.add_argument("--het", type=Path, help="a checkout of PKU-DAIR/Hetu")
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--scale", type=float, default=1.0, help="the profile's table scale")
    parser.add_argument("--caches", default="0.01,0.1", help="cache ratios on criteo-kaggle")
    parser.add_argument("--trace", type=Path, help="a real trace file, compared as well")
    parser.add_argument("--kind", default="criteo-tsv", help="--trace's format")
    parser.add_argument("--trace-caches", default="0.05,0.1", help="cache ratios on --trace")
    parser.add_argument("--trace-cluster", default="8x256", help="WORKERSxBATCH on --trace")
    parser.add_argument("--out", type=Path, default=Path("conformance-equality.json"))
    parser.add_argument("--breakdown", action="store_true",
                        help="instead: Herald's released choices added one at a time")
    parser.add_argument("--loader-rounding", action="store_true",
                        help="instead: the released scheduler on ids rounded as its loader does")
    args = parser.parse_args()
    systems = {name: path for name, path in (("herald", args.herald), ("het", args.het)) if path}
    generated = {"kind": "synthetic", "profile": "criteo-kaggle", "samples": args.samples,
                 "scale": args.scale}
    kaggle_cluster = {"workers": 8, "batch_size": 256}
    if args.breakdown:
        breakdown(generated, kaggle_cluster, _ratios(args.caches))
        return
    if args.loader_rounding:
        loader_rounding(systems, generated, kaggle_cluster, _ratios(args.caches))
        return
    reports = comparisons(generated, kaggle_cluster, _ratios(args.caches), systems)
    if args.trace is not None:
        workers, batch = (int(v) for v in args.trace_cluster.split("x"))
        dataset = dataset_of_file(args.kind, args.trace, None, DEFAULT_MAX_SAMPLES)
        reports += comparisons(dataset.model_dump(mode="json"),
                               {"workers": workers, "batch_size": batch},
                               _ratios(args.trace_caches), systems)
    args.out.write_text(json.dumps(reports, default=str) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
