"""The typed values passed between the stages of a placement: what the cluster is, what the
tables are and how often their rows are read, and where each row ends up.

As TorchRec's planner passes ``Topology`` → ``ShardingOption`` → ``ShardingPlan`` between its
enumerator, partitioner and the sharder, a placement here passes :class:`Topology`,
:class:`TableInfo` and :class:`AccessStats` in and returns a :class:`Placement`, which the
accounting (:mod:`heraldbench.platform.placements.accounting`) carries out over a trace.

A row's *holders* are coded per row by a :class:`Scope` and an ``owner``:

- ``Scope.DEVICE``: one copy on device ``owner`` (in its memory);
- ``Scope.HOST_MEMORY``: one copy in the host memory of device ``owner``'s host, read through
  that device (RecShard's UVM rows); it costs that host's memory, not the device's;
- ``Scope.PER_HOST``: one copy on every host, on the device of local index ``owner`` (0..D-1)
  of each host (rows replicated within each host's reach, sharded over its devices);
- ``Scope.EVERY_DEVICE``: a copy on every device (data-parallel); ``owner`` is unused.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from heraldbench.platform.exceptions import SpecError

__all__ = ["AccessStats", "ColumnShard", "Placement", "Scope", "TableInfo", "TablePlacement",
           "Topology"]

#: Owner codes are int16: a cluster of up to 32 767 devices.
OWNER_DTYPE = np.int16
SCOPE_DTYPE = np.int8


class Scope(enum.IntEnum):
    """Which devices hold a row (module docstring); the values are the kernels' codes."""

    DEVICE = 0
    HOST_MEMORY = 1
    PER_HOST = 2
    EVERY_DEVICE = 3


@dataclass(frozen=True)
class Topology:
    """Two tiers: ``hosts`` hosts of ``devices_per_host`` devices each. Device ``d`` is on host
    ``d // devices_per_host``; bandwidth and latency per tier belong to the time model.

    Attributes:
        hosts: H.
        devices_per_host: D.
        device_memory_bytes: what one device may hold of embedding rows and optimizer state.
        host_memory_bytes: what one host may hold of rows kept in host memory (RecShard).
    """

    hosts: int
    devices_per_host: int
    device_memory_bytes: int = 16 << 30
    host_memory_bytes: int = 256 << 30

    def __post_init__(self) -> None:
        for name in ("hosts", "devices_per_host", "device_memory_bytes", "host_memory_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise SpecError(f"topology {name} must be a positive integer, got {value!r}")
        if self.devices > np.iinfo(OWNER_DTYPE).max:
            raise SpecError(f"topology has {self.devices} devices, more than "
                            f"{np.iinfo(OWNER_DTYPE).max}")

    @property
    def devices(self) -> int:
        return self.hosts * self.devices_per_host

    def host_of(self, device: int) -> int:
        return device // self.devices_per_host


@dataclass(frozen=True)
class TableInfo:
    """One embedding table: its name, rows, width, and whether its lookups are pooled."""

    name: str
    rows: int
    dim: int
    pooled: bool = True
    #: Bytes of one value (float32: 4).
    bytes_per_value: int = 4
    #: Optimizer state per row per column shard: row-wise Adagrad, TorchRec's default, keeps 1.
    optimizer_values_per_row: int = 1

    def row_bytes(self, width: int) -> int:
        """Memory of one row of a ``width``-column shard, with its optimizer state."""
        return (width + self.optimizer_values_per_row) * self.bytes_per_value

    def __post_init__(self) -> None:
        if self.rows < 1:
            raise SpecError(f"table {self.name!r} rows must be >= 1, got {self.rows}")
        if self.dim < 1:
            raise SpecError(f"table {self.name!r} dim must be >= 1, got {self.dim}")
        if self.bytes_per_value < 1 or self.optimizer_values_per_row < 0:
            raise SpecError(f"table {self.name!r}: bytes_per_value {self.bytes_per_value} and "
                            f"optimizer_values_per_row {self.optimizer_values_per_row} must be "
                            ">= 1 and >= 0")


@dataclass(frozen=True)
class AccessStats:
    """How often each row was read in a trace, per table (``counts[t]`` has ``rows`` entries),
    and the ids per sample per table (the pooling factor)."""

    counts: tuple[np.ndarray, ...]
    samples: int

    def pooling_factor(self, table: int) -> float:
        return float(self.counts[table].sum()) / max(self.samples, 1)


@dataclass(frozen=True)
class ColumnShard:
    """A slice ``[column, column + width)`` of a table's columns, placed row by row."""

    column: int
    width: int
    scope: np.ndarray  # (rows,) int8, Scope codes
    owner: np.ndarray  # (rows,) int16, a device (DEVICE, HOST_MEMORY) or local index (PER_HOST)

    def __post_init__(self) -> None:
        if self.scope.shape != self.owner.shape or self.scope.ndim != 1:
            raise SpecError(f"column shard scope {self.scope.shape} and owner "
                            f"{self.owner.shape} must be equal 1-d shapes")


@dataclass(frozen=True)
class TablePlacement:
    """Where a table's rows are: one or more column shards covering its columns in order."""

    table: TableInfo
    shards: tuple[ColumnShard, ...]

    def __post_init__(self) -> None:
        column = 0
        for shard in self.shards:
            if shard.column != column or shard.width < 1:
                raise SpecError(f"table {self.table.name!r}: column shards must tile its "
                                f"{self.table.dim} columns, got one at {shard.column}+{shard.width}")
            if shard.scope.shape[0] != self.table.rows:
                raise SpecError(f"table {self.table.name!r}: a shard places "
                                f"{shard.scope.shape[0]} rows, the table has {self.table.rows}")
            column += shard.width
        if column != self.table.dim:
            raise SpecError(f"table {self.table.name!r}: column shards cover {column} of "
                            f"{self.table.dim} columns")


@dataclass(frozen=True)
class Placement:
    """A placement's result: every table's rows, on a topology, and its name; ``fallback`` says
    why the plan is not the one the placement chose from the trace, where it is not."""

    name: str
    topology: Topology
    tables: tuple[TablePlacement, ...]
    fallback: str | None = None

    def holders(self, table: int, row: int, shard: int = 0) -> tuple[int, ...]:
        """The devices holding ``row`` of ``table`` (column shard ``shard``), ascending."""
        part = self.tables[table].shards[shard]
        scope, owner = Scope(int(part.scope[row])), int(part.owner[row])
        topo = self.topology
        if scope is Scope.EVERY_DEVICE:
            return tuple(range(topo.devices))
        if scope is Scope.PER_HOST:
            return tuple(h * topo.devices_per_host + owner for h in range(topo.hosts))
        return (owner,)

    def held_by(self, device: int, table: int, shard: int = 0) -> np.ndarray:
        """The rows of ``table`` (column shard ``shard``) that ``device`` holds, ascending: those
        whose :meth:`holders` include it, for all rows at once."""
        part = self.tables[table].shards[shard]
        local = device % self.topology.devices_per_host
        single = (part.scope == Scope.DEVICE) | (part.scope == Scope.HOST_MEMORY)
        held = ((single & (part.owner == device))
                | ((part.scope == Scope.PER_HOST) & (part.owner == local))
                | (part.scope == Scope.EVERY_DEVICE))
        return np.flatnonzero(held)
