"""The sharding papers' claims, measured by placing and counting (no simulation of caches).

* FlexShard (its abstract): over 85% less global all-to-all traffic and almost 6× lower
  communication latency than the prior state of the art, with no more memory. Here: a sequence
  workload (the ``movielens-100k`` profile, each sample its user's last 20 items unpooled), 2
  hosts × 4 devices, 256 samples a device, dim 128; the prior state of the art read as
  TorchRec's ``table-row-wise``, and flexshard given that plan's fullest device's memory (or
  row-wise's, where that is more: flexshard's budget is never below row-wise's; the note
  gives both plans' fullest devices).
* RecShard (its abstract): for capacity-constrained models, over 6× the embedding throughput,
  from over 12× better load balance and over 87× fewer reads of the slower memory. Here: the
  claims' criteo-kaggle trace on 8 devices of one host holding a tenth of the tables' bytes
  between them (the rest must sit in host memory), against TorchRec's table-wise greedy with
  a table that fits on no device kept whole in host memory (this project's reading of the
  baselines).
  Embedding time per device is RecShard's own cost model: a device read costs 1, a host read
  ``host_read_cost`` (10); throughput follows the busiest device's cost, balance is the
  busiest device's cost over the mean device's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from heraldbench.platform.placements import (
    Placement,
    RecShard,
    Scope,
    TablePlacement,
    Topology,
    account,
    greedy_spilling,
    lookup_costs,
    row_wise_peak,
    uniform_shard,
)
from heraldbench.platform.placements.runs import (
    iteration_batches,
    place_checked,
    run_placements,
    tables_of,
)
from heraldbench.platform.placements.stats import stats_of_batches
from heraldbench.platform.placements.timing import TierLinks

__all__ = ["flexshard_metrics", "recshard_metrics", "sequence_dataset", "spilling_table_wise"]

DIM, BATCH = 128, 256
#: FlexShard's two-tier cluster: hosts × devices per host.
FLEX_HOSTS, FLEX_DEVICES = 2, 4
#: RecShard's devices (one host: its claims are about memory tiers, not links).
REC_DEVICES = 8
#: Share of the tables' bytes the devices hold between them (capacity-constrained).
REC_DEVICE_SHARE = 0.1
#: RecShard's solver time here (ours): 8 alike devices make proving the optimum slow.
REC_TIME_LIMIT_S = 10.0
#: A user's last items, the sequence feature.
HISTORY = 20


def sequence_dataset(samples: int) -> Any:
    from heraldbench.platform.data.workload.trace import SyntheticProfileSpec

    return SyntheticProfileSpec(
        profile="movielens-100k", samples=samples, scale=1.0, seed=1,
        features={"sequence": {"user": "user", "item": "item", "length": HISTORY}})  # fmt: skip


def flexshard_metrics(samples: int) -> dict[str, Any]:
    """FlexShard at table-row-wise's memory against table-row-wise on the sequence workload:
    ``flexshard.alltoall_saving`` (1 − inter-host all-to-all bytes over the baseline's) and
    ``flexshard.comm_speedup.tcp-100g`` (the baseline's modelled comm time over flexshard's)."""
    from heraldbench.platform.reproduce.runner import Measurement

    source = sequence_dataset(samples).open()
    tables, topology = tables_of(source, DIM), Topology(FLEX_HOSTS, FLEX_DEVICES)
    links = TierLinks.from_profile("tcp-100g")
    (base,) = run_placements(source, tables, topology, ["table-row-wise"], BATCH, links)
    headroom = max(base.device_memory_max / row_wise_peak(tables, topology) - 1.0, 0.0)
    knobs = {"flexshard": {"batch_size": BATCH, "memory_headroom": headroom}}
    (flex,) = run_placements(source, tables, topology, ["flexshard"], BATCH, links, knobs)
    inter = [run.traffic.alltoall_bytes_per_tier()[1] for run in (base, flex)]
    note = (f"{source.num_samples:,} samples; inter-host all-to-all {inter[0] / 1e6:.2f} → "
            f"{inter[1] / 1e6:.2f} MB an iteration; at most {flex.device_memory_max / 2**20:.1f} "
            f"MiB a device, the baseline's {base.device_memory_max / 2**20:.1f}")  # fmt: skip
    if not inter[0] or not flex.comm_seconds:
        return {name: Measurement(None, "the trace gave no whole iteration: give more samples")
                for name in ("flexshard.alltoall_saving", "flexshard.comm_speedup.tcp-100g")}
    return {"flexshard.alltoall_saving": Measurement(float(1.0 - inter[1] / inter[0]), note),
            "flexshard.comm_speedup.tcp-100g":
                Measurement(float(base.comm_seconds / flex.comm_seconds), note)}  # fmt: skip


def spilling_table_wise(tables, topology: Topology, stats) -> Placement:
    """TorchRec's table-wise greedy (most expected lookups × width first, onto the least
    loaded device with room for the whole table), where a table that fits on no device is
    kept whole in the host memory of the least loaded device."""
    sizes = [t.rows * t.row_bytes(t.dim) for t in tables]
    devices, spilled = greedy_spilling(lookup_costs(tables, stats), sizes, topology)
    return Placement("table-wise, host memory for what fits on no device", topology, tuple(
        TablePlacement(table, (uniform_shard(table.rows, 0, table.dim,
                                             Scope.HOST_MEMORY if t in spilled else Scope.DEVICE,
                                             devices[t]),))
        for t, table in enumerate(tables)))


def recshard_metrics(dataset: Any) -> dict[str, Any]:
    """RecShard against :func:`spilling_table_wise` on ``dataset`` with the devices holding
    :data:`REC_DEVICE_SHARE` of the tables: ``recshard.emb_speedup`` (the baseline's busiest
    device's cost over RecShard's), ``recshard.balance_gain`` (the baseline's busiest-over-
    mean cost over RecShard's) and ``recshard.host_read_cut`` (host reads, baseline's over
    RecShard's)."""
    from heraldbench.platform.reproduce.runner import Measurement

    source = dataset.open()
    tables = tables_of(source, DIM)
    total = sum(t.rows * t.row_bytes(t.dim) for t in tables)
    topology = Topology(1, REC_DEVICES, int(total * REC_DEVICE_SHARE / REC_DEVICES))

    def batches():
        return iteration_batches(source, REC_DEVICES * BATCH, None)

    stats = stats_of_batches(batches(), tuple(t.rows for t in tables))
    plans = {"baseline": spilling_table_wise(tables, topology, stats),
             "recshard": place_checked("recshard", {"time_limit_s": REC_TIME_LIMIT_S}, tables,
                                       topology, stats)[0]}
    read_cost = RecShard().host_read_cost
    costs, reads = {}, {}
    for name, plan in plans.items():
        traffic = account(plan, batches(), BATCH)
        host = traffic.host_memory_reads.astype(np.float64)
        costs[name] = traffic.lookups - host + read_cost * host
        reads[name] = float(host.sum())
    fewest = _fewest_host_reads(stats, tables, topology)
    note = (f"{source.num_samples:,} samples; devices hold {REC_DEVICE_SHARE:.0%} of the "
            f"tables; host reads {reads['baseline']:,.0f} → {reads['recshard']:,.0f}; the most "
            f"read rows that fit the devices, wherever they sit, leave {fewest:,.0f} "
            f"({reads['baseline'] / max(fewest, 1):.2f}× fewer at most)")
    balance = {k: c.max() / c.mean() for k, c in costs.items()}
    cut = (Measurement(reads["baseline"] / reads["recshard"], note) if reads["recshard"]
           else Measurement(None, f"RecShard reads no row from host memory here ({note})"))
    speedup = float(costs["baseline"].max() / costs["recshard"].max())
    return {"recshard.emb_speedup": Measurement(speedup, note),
            "recshard.balance_gain": Measurement(float(balance["baseline"] / balance["recshard"]),
                                                 note),
            "recshard.host_read_cut": cut}  # fmt: skip


def _fewest_host_reads(stats, tables, topology: Topology) -> float:
    """Host reads (over the statistics' samples) were the most read rows on the devices, as
    many as their memory holds, with no other constraint: a floor for any placement."""
    flat = np.sort(np.concatenate(stats.counts))[::-1]
    room = topology.devices * topology.device_memory_bytes // max(
        t.row_bytes(t.dim) for t in tables)
    return float(flat[room:].sum())
