"""Placements: time to place 100 M rows, accounting speed, and global all-to-all bytes of
flexshard against row-wise and table-row-wise on a Criteo-like synthetic trace.

Run: ``python benchmarks/bench_placements.py`` (``--quick`` for a smaller run). Placing: 26
tables of 100 M rows in all (Criteo-Kaggle's proportions), Zipf(1.05) read counts, 4 hosts × 8
devices, dim 128; the time is ``place()`` alone. Accounting: a one-hot trace in memory, 8
devices × 256 samples an iteration, the kernel's time after a warm-up (one core). Comparison:
``synthetic-criteo`` at scale 0.1 (3.4 M rows), 2 hosts × 4 devices × 256, dim 128, access
statistics and accounting over the same iterations.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import write_record

from heraldbench.platform.data.synthetic import KAGGLE_CARDINALITIES, SyntheticCriteoSpec
from heraldbench.platform.placements import (
    AccessStats,
    JaggedIds,
    TableInfo,
    Topology,
    account,
    create,
    memory_use,
)
from heraldbench.platform.placements.runs import run_placements
from heraldbench.platform.placements.timing import TierLinks

KINDS = ("table-wise", "row-wise", "table-row-wise", "column-wise", "data-parallel",
         "recshard", "flexshard")


def zipf_counts(rows: int, reads: int, rng) -> np.ndarray:
    """Read counts of a table's rows: Zipf(1.05) by rank, ranks shuffled over the rows."""
    weights = 1.0 / np.arange(1, rows + 1) ** 1.05
    return np.floor(weights / weights.sum() * reads).astype(np.int64)[rng.permutation(rows)]


def criteo_tables(total_rows: int, dim: int) -> tuple[TableInfo, ...]:
    sizes = np.asarray(KAGGLE_CARDINALITIES, np.float64)
    sizes = np.maximum(1, np.round(sizes / sizes.sum() * total_rows)).astype(int)
    return tuple(TableInfo(f"C{i + 1}", int(s), dim) for i, s in enumerate(sizes))


def placing(total_rows: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    tables = criteo_tables(total_rows, 128)
    samples = 10_000_000
    stats = AccessStats(tuple(zipf_counts(t.rows, samples, rng) for t in tables), samples)
    topology = Topology(4, 8, device_memory_bytes=80 << 30, host_memory_bytes=2 << 40)
    out = {"rows": sum(t.rows for t in tables)}
    for kind in KINDS:
        started = time.perf_counter()
        knobs = {"batch_size": 256} if kind == "flexshard" else {}
        placement = create(kind, **knobs).place(tables, topology, stats)
        out[f"{kind}_place_s"] = round(time.perf_counter() - started, 2)
        out[f"{kind}_max_device_GiB"] = round(float(memory_use(placement).device.max()) / 2**30, 2)
        del placement
    return out


def accounting_speed(samples: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    tables = criteo_tables(10_000_000, 128)
    ids = np.stack([np.minimum(rng.zipf(1.2, samples) - 1, t.rows - 1) for t in tables], 1)
    batch = JaggedIds.from_one_hot(ids, np.zeros(len(tables), np.int64))
    topology = Topology(2, 4)
    out = {"ids": int(batch.values.size)}
    for kind in ("row-wise", "flexshard"):
        stats = AccessStats(tuple(np.bincount(ids[:, t], minlength=tab.rows)
                                  for t, tab in enumerate(tables)), samples)
        knobs = {"batch_size": 256, "memory_headroom": 0.25} if kind == "flexshard" else {}
        placement = create(kind, **knobs).place(tables, topology, stats)
        account(placement, [batch], 256)  # compile, warm
        started = time.perf_counter()
        account(placement, [batch], 256)
        out[f"{kind}_Mids_per_s"] = round(batch.values.size / (time.perf_counter() - started) / 1e6, 1)
    return out


def comparison(samples: int) -> dict[str, float]:
    spec = SyntheticCriteoSpec(kind="synthetic-criteo", samples=samples, scale=0.1, seed=3)
    source = spec.open()
    tables = tuple(TableInfo(n, r, 128) for n, r in
                   zip(source.layout.names, source.layout.sizes, strict=True))
    topology = Topology(2, 4, device_memory_bytes=16 << 30)
    out = {}
    kinds = ["row-wise", "table-row-wise", "flexshard"]
    for headroom in (0.0, 0.001, 0.01, 0.1):
        knobs = {"flexshard": {"batch_size": 256, "memory_headroom": headroom}}
        runs = run_placements(source, tables, topology, kinds if headroom == 0 else ["flexshard"],
                              256, TierLinks.from_profile("tcp-100g"), knobs)
        for run in runs:
            name = run.kind if run.kind != "flexshard" else f"flexshard_headroom_{headroom}"
            summary = run.summary()
            out[f"{name}_inter_MB_per_it"] = round(summary["inter_host_bytes_per_iteration"] / 1e6, 3)
            alltoall = summary["inter_host_alltoall_bytes_per_iteration"]
            out[f"{name}_inter_alltoall_MB_per_it"] = round(alltoall / 1e6, 3)
            out[f"{name}_intra_MB_per_it"] = round(summary["intra_host_bytes_per_iteration"] / 1e6, 3)
            out[f"{name}_max_device_MiB"] = round(summary["device_memory_max_bytes"] / 2**20, 1)
            out[f"{name}_comm_ms_per_it"] = round(summary["comm_ms_per_iteration"], 3)
            out[f"{name}_load_balance"] = round(summary["load_balance"], 3)
    for key in [k for k in out if k.startswith("flexshard") and k.endswith("_inter_MB_per_it")]:
        for baseline in ("row-wise", "table-row-wise"):
            ratio = out[key] / out[f"{baseline}_inter_MB_per_it"]
            out[key.replace("_inter_MB_per_it", f"_inter_vs_{baseline}")] = round(ratio, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 M rows, smaller traces")
    args = parser.parse_args()
    figures = {"placing": placing(10_000_000 if args.quick else 100_000_000)}
    print(figures["placing"], flush=True)
    figures["accounting"] = accounting_speed(200_000 if args.quick else 2_000_000)
    print(figures["accounting"], flush=True)
    figures["comparison"] = comparison(200_000 if args.quick else 2_000_000)
    print(figures["comparison"], flush=True)
    if not args.quick:
        print(write_record("placements", figures))


if __name__ == "__main__":
    main()
