"""``flexshard``: per-row tiers from access probability on a two-tier cluster.

From FlexShard's abstract (Sethi et al., arXiv 2301.02959): tiered, per-row sharding; rows
replicated according to their access probability; sharding adapted to a cluster whose links
within a host are faster than across hosts; no more memory than the prior state of the art.

Our choices (docs/sharding.md): three tiers, ``hot`` (a copy on every device), ``warm`` (a
copy on every host, the host's rows spread over its devices) and ``cold`` (one copy, spread
over the cluster); a row's expected traffic per iteration in each tier is priced with tier
weights (intra 1, inter ``inter_cost``), from its expected reads per iteration ``c = p·B`` and
the probability ``q = 1 − (1 − p)^B`` that the iteration touches it (``p``: its reads per
sample, ``B``: samples per iteration), and rows are promoted by expected reads, hottest first,
within the memory budget: by default the row-wise baseline's largest per-device memory, and
never more than a device holds.
"""

from __future__ import annotations

import numpy as np

from heraldbench.platform.exceptions import CapacityError, SpecError
from heraldbench.platform.placements._base import PlacementAlgorithm, numbers, register
from heraldbench.platform.placements._hottest import most_read
from heraldbench.platform.placements._row_wise import row_wise_peak
from heraldbench.platform.placements.memory import memory_use
from heraldbench.platform.placements.types import (
    OWNER_DTYPE,
    SCOPE_DTYPE,
    AccessStats,
    ColumnShard,
    Placement,
    Scope,
    TableInfo,
    TablePlacement,
    Topology,
)

__all__ = ["FlexShard", "tier_costs"]


def tier_costs(reads: np.ndarray, touched: np.ndarray, topo: Topology,
               inter_cost: float) -> np.ndarray:
    """Weighted vectors sent per iteration by a row in each tier, shape (3, n): cold, warm,
    hot. Lookups cost forward + backward; replicas cost their all-reduce (accounting's model)."""
    h, d, w = topo.hosts, topo.devices_per_host, topo.devices
    cold = 2 * reads * ((d - 1) / w + (w - d) / w * inter_cost)
    warm = 2 * reads * (d - 1) / d + 2 * (h - 1) * touched * inter_cost
    hot = touched * (2 * (d - 1) * h + 2 * (h - 1) * inter_cost)
    return np.stack([cold, warm, hot])


@register
class FlexShard(PlacementAlgorithm):
    """Hot rows on every device, warm rows on every host, the rest spread over the cluster."""

    kind = "flexshard"
    needs_stats = True

    def __init__(self, batch_size: int = 256, inter_cost: float = 10.0,
                 memory_headroom: float = 0.0, hot_share: float = 0.5) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise SpecError(f"flexshard batch_size must be a positive integer, got {batch_size!r}")
        numbers(self.kind, inter_cost=inter_cost, memory_headroom=memory_headroom,
                hot_share=hot_share)  # fmt: skip
        if not inter_cost >= 1:
            raise SpecError(f"flexshard inter_cost must be >= 1, got {inter_cost!r}")
        if not memory_headroom >= 0:
            raise SpecError(f"flexshard memory_headroom must be >= 0, got {memory_headroom!r}")
        if not 0 <= hot_share <= 1:
            raise SpecError(f"flexshard hot_share must be in [0, 1], got {hot_share!r}")
        self.batch_size, self.inter_cost = batch_size, float(inter_cost)
        self.memory_headroom, self.hot_share = float(memory_headroom), float(hot_share)

    def _place(self, tables: tuple[TableInfo, ...], topology: Topology,
               stats: AccessStats | None) -> tuple[TablePlacement, ...]:
        assert stats is not None
        budget = self._budget(tables, topology)
        tiers = self._tiers(tables, topology, stats, budget)
        while True:
            placed = _assign(tables, topology, tiers)
            peak = self._peak(topology, placed)
            if peak <= budget:
                return placed
            if not any(tier.any() for tier in tiers):
                raise CapacityError(self._over_budget(peak, budget, topology))
            tiers = _demote_coldest(tiers)

    def check_fits_any_trace(self, tables: tuple[TableInfo, ...], topology: Topology) -> None:
        """Rows are demoted until the plan fits, at worst to every row cold (one copy, spread
        over the cluster), a plan of the tables alone: where that one fits, every trace's
        does. Exact where every row has the same bytes (one dim, as a spec has): with rows of
        several sizes a plan with some rows hot could fit where the all-cold one does not."""
        cold = _assign(tables, topology, [np.zeros(t.rows, np.int8) for t in tables])
        budget, peak = self._budget(tables, topology), self._peak(topology, cold)
        if peak > budget:
            raise CapacityError(self._over_budget(peak, budget, topology))

    def _budget(self, tables: tuple[TableInfo, ...], topology: Topology) -> float:
        """The prior state of the art's memory (row-wise's fullest device) with the headroom,
        never above what a device holds."""
        return min(row_wise_peak(tables, topology) * (1 + self.memory_headroom),
                   topology.device_memory_bytes)

    def _peak(self, topology: Topology, placed: tuple[TablePlacement, ...]) -> int:
        return int(memory_use(Placement(self.kind, topology, placed)).device.max())

    def _over_budget(self, peak: int, budget: float, topology: Topology) -> str:
        return (f"flexshard puts {peak:,} bytes on a device with every row cold, above its "
                f"budget of {int(budget):,} bytes (row-wise's fullest device × (1 + "
                f"memory_headroom {self.memory_headroom:g}), at most device_memory_bytes "
                f"{topology.device_memory_bytes:,})")

    def _tiers(self, tables, topology, stats, budget) -> list[np.ndarray]:
        """Per table, each row's tier (0 cold, 1 warm, 2 hot): the hottest rows first, hot
        where it is the cheapest tier (up to ``hot_share`` of the spare memory), then warm where
        it beats cold, while the spare memory lasts."""
        iteration = self.batch_size * topology.devices
        table_of, rows = _hottest(stats.counts)
        tiers = [np.zeros(t.rows, np.int8) for t in tables]
        if rows.size == 0:
            return tiers
        reads = np.concatenate(stats.counts)[rows + _bases(stats.counts)[table_of]]
        p = np.minimum(reads / max(stats.samples, 1), 1.0)
        costs = tier_costs(p * iteration, 1 - (1 - p) ** iteration, topology, self.inter_cost)
        row_bytes = np.array([t.row_bytes(t.dim) for t in tables], np.float64)[table_of]
        spare = budget - sum(t.rows * t.row_bytes(t.dim) for t in tables) / topology.devices
        spare -= 2 * row_bytes.max() * len(tables)  # per table, a row's rounding on each device
        hot_bytes = row_bytes * (1 - 1 / topology.devices)
        warm_bytes = row_bytes * (1 / topology.devices_per_host - 1 / topology.devices)
        hot = costs[2] < costs[:2].min(0)
        hot &= np.cumsum(np.where(hot, hot_bytes, 0)) <= max(spare, 0) * self.hot_share
        spare -= hot_bytes[hot].sum()
        warm = ~hot & (costs[1] < costs[0])
        warm &= np.cumsum(np.where(warm, warm_bytes, 0)) <= max(spare, 0)
        level = np.where(hot, 2, np.where(warm, 1, 0)).astype(np.int8)
        for t, tier in enumerate(tiers):
            mine = table_of == t
            tier[rows[mine]] = level[mine]
        return tiers


def _hottest(counts, limit: int = 1 << 22) -> tuple[np.ndarray, np.ndarray]:
    """Tables and rows of the most read rows, most read first (at most ``limit``, read once
    at least); the rest stay cold without being sorted, so 100 M rows place in seconds."""
    flat = np.concatenate(counts)
    top = most_read(flat, min(limit, int(np.count_nonzero(flat))))
    top = top[np.argsort(-flat[top], kind="stable")]
    bases = _bases(counts)
    tables = np.searchsorted(bases, top, side="right") - 1
    return tables, top - bases[tables]


def _bases(counts) -> np.ndarray:
    return np.concatenate([[0], np.cumsum([c.size for c in counts])]).astype(np.int64)


def _demote_coldest(tiers: list[np.ndarray]) -> list[np.ndarray]:
    """Drop about 1% of the warm rows (or the hot ones if none is warm) back to cold; some
    row is warm or hot."""
    for level in (1, 2):
        for tier in tiers:
            rows = np.flatnonzero(tier == level)
            if rows.size:
                tier[rows[-max(1, rows.size // 100):]] = 0
                return tiers
    raise AssertionError("no warm or hot row to demote")


def _assign(tables, topology, tiers) -> tuple[TablePlacement, ...]:
    """Owners: warm rows round-robin over a host's devices, cold rows over the cluster, each
    continuing across tables so that the devices' memory stays even."""
    next_warm, next_cold, out = 0, 0, []
    scope_of = np.array([Scope.DEVICE, Scope.PER_HOST, Scope.EVERY_DEVICE], SCOPE_DTYPE)
    for table, tier in zip(tables, tiers, strict=True):
        owner = np.zeros(table.rows, np.int64)
        for level, modulus, start in ((0, topology.devices, next_cold),
                                      (1, topology.devices_per_host, next_warm)):
            rows = np.flatnonzero(tier == level)
            owner[rows] = (start + np.arange(rows.size)) % modulus
            if level == 0:
                next_cold += rows.size
            else:
                next_warm += rows.size
        shard = ColumnShard(0, table.dim, scope_of[tier], owner.astype(OWNER_DTYPE))
        out.append(TablePlacement(table, (shard,)))
    return tuple(out)

