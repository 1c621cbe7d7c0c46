"""The placement family: a small abstract base and a name registry, as the schedulers have.

A placement *decides* where each row lives; it never counts. The accounting carries a
:class:`~heraldbench.platform.placements.types.Placement` out over a trace.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np

from heraldbench.platform.exceptions import SpecError, UnknownNameError
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

__all__ = ["PlacementAlgorithm", "create", "numbers", "register", "registered", "uniform_shard"]

_REGISTRY: dict[str, type[PlacementAlgorithm]] = {}


class PlacementAlgorithm(abc.ABC):
    """Places tables on a topology. Knobs are constructor arguments, validated there."""

    kind: ClassVar[str]
    #: Whether :meth:`place` reads the trace's access statistics.
    needs_stats: ClassVar[bool] = False
    #: Whether every device holds every row (else each row is held at least once).
    every_row_everywhere: ClassVar[bool] = False
    #: Whether rows may be kept in host memory instead of a device's.
    uses_host_memory: ClassVar[bool] = False

    def place(self, tables: tuple[TableInfo, ...], topology: Topology,
              stats: AccessStats | None = None) -> Placement:
        if self.needs_stats and stats is None:
            raise SpecError(f"placement {self.kind!r} needs the trace's access statistics")
        if stats is not None and len(stats.counts) != len(tables):
            raise SpecError(f"access statistics for {len(stats.counts)} tables, "
                            f"{len(tables)} tables given")
        return Placement(self.kind, topology, self._place(tables, topology, stats))

    def check_fits_any_trace(self, tables: tuple[TableInfo, ...], topology: Topology) -> None:
        """Raise :class:`~heraldbench.platform.exceptions.CapacityError` where a run could
        fail on ``topology``'s memory; what a submission is checked by, before the trace
        exists. Here the plan of the tables alone, which a run falls back to where its plan
        balanced by the trace's lookups does not fit (``memory.place_fitting``); a placement
        that needs the statistics says what its fit depends on."""
        from heraldbench.platform.placements.memory import check_fits  # it imports this module

        if self.needs_stats:  # no check of its own: nothing is known before the trace
            return
        check_fits(self.place(tables, topology))

    @abc.abstractmethod
    def _place(self, tables: tuple[TableInfo, ...], topology: Topology,
               stats: AccessStats | None) -> tuple[TablePlacement, ...]:
        """Every table's placement, in table order."""


def numbers(kind: str, **knobs: Any) -> None:
    """Refuse a knob that is not a number (a boolean is not one), naming the placement."""
    for name, value in knobs.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SpecError(f"{kind} {name} must be a number, got {value!r}")


def register(cls: type[PlacementAlgorithm]) -> type[PlacementAlgorithm]:
    if cls.kind in _REGISTRY:
        raise SpecError(f"placement kind {cls.kind!r} is registered twice")
    _REGISTRY[cls.kind] = cls
    return cls


def registered() -> dict[str, type[PlacementAlgorithm]]:
    return dict(_REGISTRY)


def create(kind: str, **knobs: Any) -> PlacementAlgorithm:
    """The placement called ``kind`` with ``knobs``."""
    try:
        cls = _REGISTRY[kind]
    except KeyError:
        raise UnknownNameError("placement", kind, sorted(_REGISTRY)) from None
    return cls(**knobs)


def uniform_shard(rows: int, column: int, width: int, scope: Scope, owner: int) -> ColumnShard:
    """A column shard whose rows all share one scope and owner."""
    return ColumnShard(column, width, np.full(rows, int(scope), SCOPE_DTYPE),
                       np.full(rows, owner, OWNER_DTYPE))


def block_owners(rows: int, devices: np.ndarray) -> np.ndarray:
    """TorchRec's row-wise blocks: ``ceil(rows / n)`` rows per device in order, the last
    blocks shorter or empty (``_calculate_rw_shard_sizes_and_offsets``)."""
    block = -(-rows // len(devices))
    return np.asarray(devices, OWNER_DTYPE)[np.arange(rows, dtype=np.int64) // block]
