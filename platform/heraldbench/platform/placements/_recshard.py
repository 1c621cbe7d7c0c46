"""``recshard``: each table on one device, its most read rows in that device's memory and the
rest in its host's memory, chosen by a mixed-integer program over the trace's statistics.

From RecShard (Sethi et al., ASPLOS'22): per-row placement of embedding tables over GPU memory
and host (UVM) memory from the training data's access statistics, balanced across GPUs by a
MILP. Our choices (docs/sharding.md): the rows kept in device memory are a hottest-first prefix
of a fixed menu of fractions (``buckets``), so the program has tables × devices × buckets
binaries and solves in seconds; a read from host memory costs ``host_read_cost`` device reads;
the objective is the busiest device's cost plus a tenth of the mean device's. Solved with
HiGHS through ``scipy.optimize.milp``.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from heraldbench.platform.exceptions import CapacityError, SpecError
from heraldbench.platform.placements._base import PlacementAlgorithm, numbers, register
from heraldbench.platform.placements._hottest import most_read, top_read_sums
from heraldbench.platform.placements.types import (
    OWNER_DTYPE,
    SCOPE_DTYPE,
    AccessStats,
    ColumnShard,
    Scope,
    TableInfo,
    TablePlacement,
    Topology,
)

__all__ = ["RecShard"]

#: Stop within 1% of the optimum (ours: the cost model is coarser than that).
MIP_GAP = 0.01
#: Weight of the mean device's cost in the objective, beside the busiest device's (ours).
MEAN_WEIGHT = 0.1
#: Shares of a table's rows kept in device memory, hottest first (our menu).
BUCKETS = (0.0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0)
#: The most shares a menu may hold: the program grows with tables × devices × shares (ours).
MAX_BUCKETS = 32
#: The most seconds a submission's check that some plan fits may take (ours).
FIT_CHECK_S = 5.0
#: ``scipy.optimize.milp``'s status for a program proven infeasible.
INFEASIBLE = 2


@register
class RecShard(PlacementAlgorithm):
    """Table per device, hot rows in device memory, the rest in host memory (a MILP)."""

    kind = "recshard"
    needs_stats = True
    uses_host_memory = True

    def __init__(self, host_read_cost: float = 10.0, time_limit_s: float = 60.0,
                 buckets: tuple[float, ...] = BUCKETS) -> None:
        numbers(self.kind, host_read_cost=host_read_cost, time_limit_s=time_limit_s)
        if not isinstance(buckets, list | tuple):
            raise SpecError(f"recshard buckets must be a list of shares, got {buckets!r}")
        numbers(self.kind, **{f"buckets[{i}]": b for i, b in enumerate(buckets)})
        if not host_read_cost >= 1:
            raise SpecError(f"recshard host_read_cost must be >= 1, got {host_read_cost!r}")
        if not time_limit_s > 0:
            raise SpecError(f"recshard time_limit_s must be > 0, got {time_limit_s!r}")
        ascending = all(a < b for a, b in itertools.pairwise(buckets))
        if not buckets or not ascending or buckets[-1] != 1.0 or buckets[0] < 0:
            raise SpecError(f"recshard buckets must ascend strictly within [0, 1] to 1.0, got "
                            f"{buckets!r}")
        if len(buckets) > MAX_BUCKETS:
            raise SpecError(f"recshard buckets: at most {MAX_BUCKETS} shares, got "
                            f"{len(buckets)}")
        self.host_read_cost, self.time_limit_s = float(host_read_cost), float(time_limit_s)
        self.buckets = tuple(float(b) for b in buckets)

    def _place(self, tables: tuple[TableInfo, ...], topology: Topology,
               stats: AccessStats | None) -> tuple[TablePlacement, ...]:
        assert stats is not None
        kept = self._kept(tables)
        device_reads = [top_read_sums(c, n) for c, n in zip(stats.counts, kept, strict=True)]
        choice = self._solve(tables, topology, kept, device_reads, stats)
        return tuple(_table(table, counts, kept[t][k], g)
                     for t, (table, counts, (g, k)) in
                     enumerate(zip(tables, stats.counts, choice, strict=True)))

    def check_fits_any_trace(self, tables: tuple[TableInfo, ...], topology: Topology) -> None:
        """The trace decides which rows a table keeps on its device, never how many: each
        choice of device and bucket takes the same memory on any trace, so the program with
        no objective says whether some plan fits (a solver that runs out of time says
        nothing, and the plan is checked when it is placed)."""
        kept = self._kept(tables)
        matrix, lo, hi = _constraints(tables, topology, kept, np.zeros((len(tables),
                                                                        len(self.buckets))))
        result = _any_plan(matrix, lo, hi, min(self.time_limit_s, FIT_CHECK_S))
        if result.status == INFEASIBLE:
            raise CapacityError(self._no_fit(topology, "no choice of device and share fits"))

    def _kept(self, tables: tuple[TableInfo, ...]) -> list[list[int]]:
        """Per table and bucket, the rows kept in device memory."""
        return [[int(np.ceil(b * t.rows)) for b in self.buckets] for t in tables]

    def _solve(self, tables, topo, kept, device_reads, stats) -> list[tuple[int, int]]:
        """(device, bucket) per table minimising the busiest device's cost."""
        n_t, n_g = len(tables), topo.devices
        per_sample = max(stats.samples, 1)
        cost = np.zeros((n_t, len(self.buckets)))
        for t in range(n_t):
            total = float(stats.counts[t].sum())
            hot = np.asarray(device_reads[t], np.float64)
            cost[t] = (hot + (total - hot) * self.host_read_cost) / per_sample
        matrix, lo, hi = _constraints(tables, topo, kept, cost)
        objective = np.zeros(matrix.shape[1])
        objective[-1] = 1.0
        # a tenth of the mean device's cost besides the busiest one's: devices off the critical
        # path keep their hot rows in device memory too (the solver's gap ignores a tiny weight)
        objective[:-1] = MEAN_WEIGHT / n_g * np.repeat(cost[:, None, :], n_g, axis=1).ravel()
        result = _milp(objective, matrix, lo, hi, self.time_limit_s)
        if result.x is None and result.status != INFEASIBLE:
            # out of time before any plan: the program without an objective (a submission's
            # check) finds one where one exists, and the run places rather than fails
            result = _any_plan(matrix, lo, hi, max(self.time_limit_s, FIT_CHECK_S))
        if result.x is None:
            raise CapacityError(self._no_fit(topo, result.message))
        z = np.round(result.x[:-1]).reshape(n_t, n_g, len(self.buckets))
        return [tuple(int(i) for i in np.argwhere(z[t] > 0.5)[0]) for t in range(n_t)]

    def _no_fit(self, topo: Topology, why: str) -> str:
        return (f"recshard finds no placement within device_memory_bytes "
                f"{topo.device_memory_bytes:,} and host_memory_bytes "
                f"{topo.host_memory_bytes:,}: {why}")


def _constraints(tables: tuple[TableInfo, ...], topo: Topology, kept: list[list[int]],
                 cost: np.ndarray) -> tuple[Any, list[float], list[float]]:
    """Rows of the program over z[t, g, k] (table t on device g keeps bucket k) and the
    makespan C, as a sparse matrix: each table placed once; each device's cost at most C and
    its kept rows within its memory; each host's other rows within its memory."""
    from scipy.sparse import coo_array

    n_t, n_g, n_k = len(tables), topo.devices, len(kept[0])
    n = n_t * n_g * n_k + 1
    dev_mem, host_mem = np.zeros((n_t, n_k)), np.zeros((n_t, n_k))
    for t, table in enumerate(tables):
        rb = table.row_bytes(table.dim)
        dev_mem[t] = np.asarray(kept[t]) * rb
        host_mem[t] = (table.rows - np.asarray(kept[t])) * rb
    z = np.arange(n - 1).reshape(n_t, n_g, n_k)  # column of each z[t, g, k]
    t_of, g_of, k_of = np.indices((n_t, n_g, n_k)).reshape(3, -1)
    placed = (t_of, z.ravel(), np.ones(n - 1))  # row t: table t placed once
    cost_rows = (n_t + 2 * g_of, z.ravel(), cost[t_of, k_of])  # row n_t + 2g: cost ≤ C
    makespan = (n_t + 2 * np.arange(n_g), np.full(n_g, n - 1), -np.ones(n_g))
    memory = (n_t + 2 * g_of + 1, z.ravel(), dev_mem[t_of, k_of])  # device g's memory
    host = (n_t + 2 * n_g + g_of // topo.devices_per_host, z.ravel(), host_mem[t_of, k_of])
    rows, cols, values = (np.concatenate(part) for part in
                          zip(placed, cost_rows, makespan, memory, host, strict=True))
    matrix = coo_array((values, (rows, cols)), shape=(n_t + 2 * n_g + topo.hosts, n)).tocsr()
    lo = [1.0] * n_t + [-np.inf] * (2 * n_g + topo.hosts)
    hi = ([1.0] * n_t + [v for _ in range(n_g) for v in (0.0, topo.device_memory_bytes)]
          + [topo.host_memory_bytes] * topo.hosts)
    return matrix, lo, hi


def _any_plan(matrix: Any, lo: list[float], hi: list[float], time_limit_s: float) -> Any:
    """The program with no objective: whether any choice of device and share fits."""
    return _milp(np.zeros(matrix.shape[1]), matrix, lo, hi, time_limit_s)


def _milp(objective: np.ndarray, matrix: np.ndarray, lo: list[float], hi: list[float],
          time_limit_s: float) -> Any:
    """HiGHS over binaries z and the continuous makespan (the last variable)."""
    from scipy.optimize import Bounds, LinearConstraint, milp  # a spec imports this module

    n = matrix.shape[1]
    integrality = np.ones(n)
    integrality[-1] = 0
    return milp(objective, constraints=LinearConstraint(matrix, lo, hi), integrality=integrality,
                bounds=Bounds(0, np.r_[np.ones(n - 1), np.inf]),
                options={"time_limit": time_limit_s, "mip_rel_gap": MIP_GAP})


def _table(table: TableInfo, counts: np.ndarray, kept: int, device: int) -> TablePlacement:
    scope = np.full(table.rows, int(Scope.HOST_MEMORY), SCOPE_DTYPE)
    if kept >= table.rows:
        scope[:] = int(Scope.DEVICE)
    elif kept > 0:
        scope[most_read(counts, kept)] = int(Scope.DEVICE)
    owner = np.full(table.rows, device, OWNER_DTYPE)
    return TablePlacement(table, (ColumnShard(0, table.dim, scope, owner),))
