"""One rank's copies of embedding rows: a per-worker cache with pending deltas, FAE's replicated
hot table, and BagPipe's replica of the logically replicated cache.

The arithmetic is the emulated executors' (:mod:`heraldbench.platform.train.executor` and
:mod:`heraldbench.platform.train._replicated_cache`), restricted to one worker: a pull installs
``PS[k] + delta[k]``; an update subtracts ``lr·g`` from the copy and its delta; a push hands the
delta to the row's owner. Consistency checks stay with the emulated executors, which the
distributed trainer is tested against; here a capacity overrun is the one error.
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform._sorted import find_sorted
from heraldbench.platform.exceptions import CapacityError, InvariantViolation

__all__ = ["HotReplica", "RowSlots"]


def _index(values: np.ndarray, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.int64)).to(device)


class RowSlots:
    """Copies of rows in slots, with a pending delta (updates the PS has not seen) per slot.

    Args:
        rows: R, rows of the global table (``slot_of`` is indexed by global id).
        capacity: slots; ``growable`` lets a replica stage rows past it for one iteration.
        dim, dtype, device: of the copies.
    """

    def __init__(self, rows: int, capacity: int, dim: int, dtype: torch.dtype,
                 device: torch.device, growable: bool = False) -> None:  # fmt: skip
        self.capacity, self.growable, self.device = capacity, growable, device
        self.slot_of = np.full(rows, -1, np.int64)
        self.values = torch.zeros(capacity, dim, dtype=dtype, device=device)
        self.delta = torch.zeros_like(self.values)
        self.dirty = np.zeros(capacity, bool)  # updated since loaded or last sent
        # Free slots, a stack: _free[:_top], popped from the top (slot 0 first at the start).
        self._free = np.arange(capacity - 1, -1, -1, dtype=np.int64)
        self._top = capacity

    def slots(self, ids: np.ndarray) -> np.ndarray:
        """Slots of ``ids``; raises if a row is not held."""
        slots = self.slot_of[np.asarray(ids, np.int64)]
        if (slots < 0).any():
            k = int(np.asarray(ids)[np.flatnonzero(slots < 0)[0]])
            raise InvariantViolation(f"row {k} is read or sent but not held")
        return slots

    def held(self, ids: np.ndarray) -> np.ndarray:
        return self.slot_of[np.asarray(ids, np.int64)] >= 0

    def install(self, ids: np.ndarray, values: torch.Tensor) -> None:
        """Pull: allocate rows not held, then ``copy = value + delta`` (HET keeps its pending
        updates across a refresh; a strict scheduler's delta is 0 here)."""
        ids = np.asarray(ids, np.int64)
        self.allocate_missing(ids)
        index = _index(self.slot_of[ids], self.device)
        self.values.index_copy_(0, index, values + self.delta.index_select(0, index))

    def allocate_missing(self, ids: np.ndarray) -> None:
        """Slots for the rows of ``ids`` not held (a miss), in order."""
        ids = np.asarray(ids, np.int64)
        self._allocate(ids[self.slot_of[ids] < 0])

    def mark_dirty(self, slots: np.ndarray) -> None:
        """The copies in ``slots`` hold updates the PS lacks (a delta taken over)."""
        self.dirty[slots] = True

    def drop(self, ids: np.ndarray) -> None:
        """Free the slots of ``ids`` (rows not held are ignored)."""
        ids = np.asarray(ids, np.int64)
        slots = self.slot_of[ids]
        slots = slots[slots >= 0]
        if self.dirty[slots].any() and not self.growable:
            raise InvariantViolation("a copy with unsent updates left its cache")
        self.slot_of[ids] = -1
        self.dirty[slots] = False
        self.delta[_index(slots, self.device)] = 0
        self._free[self._top : self._top + slots.size] = slots
        self._top += slots.size

    def read(self, slots: np.ndarray) -> torch.Tensor:
        return self.values.index_select(0, _index(slots, self.device))

    def update(self, slots: np.ndarray, grad: torch.Tensor, lr: float) -> None:
        """SGD on the copies in ``slots``, mirrored in their deltas."""
        index = _index(slots, self.device)
        self.values.index_add_(0, index, grad, alpha=-lr)
        self.delta.index_add_(0, index, grad, alpha=-lr)
        self.dirty[slots] = True

    def take_delta(self, ids: np.ndarray) -> torch.Tensor:
        """The pending deltas of ``ids`` (to push), cleared here."""
        index = _index(self.slots(ids), self.device)
        deltas = self.delta.index_select(0, index)
        self.delta.index_fill_(0, index, 0.0)
        self.dirty[index.cpu().numpy()] = False
        return deltas

    def take_values(self, ids: np.ndarray) -> torch.Tensor:
        """The values of ``ids`` (a replica written back whole); they are clean afterwards."""
        slots = self.slots(ids)
        self.dirty[slots] = False
        self.delta[_index(slots, self.device)] = 0
        return self.read(slots)

    def pending(self) -> tuple[np.ndarray, np.ndarray]:
        """(global ids, slots) of the copies holding updates the PS lacks."""
        slots = np.flatnonzero(self.dirty)
        rows = np.flatnonzero(self.slot_of >= 0)
        row_of_slot = np.empty(self.capacity, np.int64)
        row_of_slot[self.slot_of[rows]] = rows
        return row_of_slot[slots], slots

    def _allocate(self, ids: np.ndarray) -> None:
        if len(ids) > self._top:
            if not self.growable:
                raise CapacityError(f"a worker cache of {self.capacity} rows is full")
            self._grow(len(ids) - self._top)
        top = self._top - len(ids)
        self.slot_of[ids] = self._free[top : self._top][::-1]  # popped one by one, in order
        self._top = top

    def _grow(self, extra: int) -> None:
        old = self.capacity
        self.capacity = max(2 * old, old + extra)
        grow = self.capacity - old
        pad = torch.zeros(grow, self.values.shape[1], dtype=self.values.dtype, device=self.device)
        self.values = torch.cat([self.values, pad])
        self.delta = torch.cat([self.delta, pad.clone()])
        self.dirty = np.concatenate([self.dirty, np.zeros(grow, bool)])
        free = np.arange(self.capacity - 1, old - 1, -1, dtype=np.int64)  # below the old ones
        self._free = np.concatenate([free, self._free[: self._top],
                                     np.empty(self.capacity - grow - self._top, np.int64)])
        self._top += grow


class HotReplica:
    """FAE's replicated rows H on this rank while a hot phase runs (identical on every rank).

    Args:
        rows: (H,) global ids, in the phase switch's order.
        values: (H, D) their PS values.
    """

    def __init__(self, rows: np.ndarray, values: torch.Tensor) -> None:
        self.rows = np.asarray(rows, np.int64)
        self.order = np.argsort(self.rows, kind="stable")
        self.sorted = self.rows[self.order]
        self.values = values

    def positions(self, ids: np.ndarray) -> np.ndarray:
        """Position in :attr:`rows` of each of ``ids``; raises if one is not replicated."""
        at, found = find_sorted(self.sorted, np.asarray(ids, np.int64).ravel())
        if not found.all():
            raise InvariantViolation("a replicated batch reads a row outside the replicated set")
        return self.order[at].reshape(np.shape(ids))
