"""Copies parked by direct transfers (herald-plus), held by their senders until handed over.

A ``Send.DIRECT`` of (k, v) parks v's copy of k here: its value and its pending delta (and, for
the emulated executor's consistency checks, the updates the copy holds and those its delta
holds). A copy parked again before it was handed over keeps the newer value and the sum of the
deltas. The stream's hand-overs (:class:`~heraldbench.platform.contract.IterationDecisions`)
say when a parked copy leaves; one parked for good at the end of a run is flushed with the
dirty copies.

Public: the distributed trainer parks and hands over copies with the same rules.
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform._sorted import find_sorted
from heraldbench.platform.contract import IterationDecisions, record_keys
from heraldbench.platform.exceptions import InvariantViolation
from heraldbench.platform.train.rows import index_tensor

__all__ = ["ParkedCopies", "apply_handed", "handed_keys"]


def handed_keys(dec: IterationDecisions) -> np.ndarray:
    """The parked copy each hand-over of ``dec`` takes: (row, sender) keys."""
    return record_keys(dec.handed_ids, dec.handed_from)


def apply_handed(values: torch.Tensor, delta: torch.Tensor, slots: np.ndarray, carry: np.ndarray,
                 handed_values: torch.Tensor, carried_deltas: torch.Tensor) -> None:  # fmt: skip
    """A reader's side of its hand-overs: each copy is installed as a pull is, ``value +
    delta``; a carried delta becomes the reader's pending update.

    Args:
        values, delta: the reader's copies and their pending deltas; slots: (n,) the slot of
            each hand-over's row there.
        carry: (n,) the hand-overs whose delta the reader takes over; handed_values: (n, D)
            the parked values; carried_deltas: the parked deltas of the carried ones.
    """
    index = index_tensor(slots, values.device)
    values.index_copy_(0, index, handed_values + delta.index_select(0, index))
    delta.index_add_(0, index_tensor(np.asarray(slots)[carry], delta.device), carried_deltas)



class ParkedCopies:
    """Parked copies by (row, sender) key, in slots of two growable (n, D) tensors.

    Args:
        dim, dtype, device: of the values.
    """

    def __init__(self, dim: int, dtype: torch.dtype, device: torch.device) -> None:
        self.keys = np.zeros(0, np.int64)  # parked keys, sorted
        self.key_slots = np.zeros(0, np.int64)  # the slot of each
        self.values = torch.zeros(0, dim, dtype=dtype, device=device)
        self.delta = torch.zeros_like(self.values)
        self.version = np.zeros(0, np.int64)  # updates the parked value holds
        self.updates = np.zeros(0, np.int64)  # updates the parked delta holds
        self._free = np.zeros(0, np.int64)  # a stack of free slots (their delta is zero)

    def __len__(self) -> int:
        return int(self.keys.size)

    def park(self, keys: np.ndarray, values: torch.Tensor, deltas: torch.Tensor,
             version: np.ndarray | None = None, updates: np.ndarray | None = None) -> None:  # fmt: skip
        """Park ``values`` and ``deltas`` (one row per key, keys distinct); a key parked already
        keeps the newer value and adds the delta."""
        keys = np.asarray(keys, np.int64)
        at, known = find_sorted(self.keys, keys)
        slots = np.empty(keys.size, np.int64)
        slots[known] = self.key_slots[at[known]]
        fresh = np.flatnonzero(~known)
        if fresh.size:
            slots[fresh] = self._take_free(fresh.size)
            order = fresh[np.argsort(keys[fresh], kind="stable")]  # new keys, ascending
            at = np.searchsorted(self.keys, keys[order])  # into the sorted keys, in one pass
            self.keys = np.insert(self.keys, at, keys[order])
            self.key_slots = np.insert(self.key_slots, at, slots[order])
        index = index_tensor(slots, self.values.device)
        self.values.index_copy_(0, index, values)
        self.delta.index_add_(0, index, deltas)
        if version is not None and updates is not None:
            self.version[slots] = version
            self.updates[slots] += updates

    def slots(self, keys: np.ndarray) -> np.ndarray:
        """Slots of parked ``keys``; raises if one is not parked."""
        keys = np.asarray(keys, np.int64)
        at, known = find_sorted(self.keys, keys)
        if not known.all():
            k = int(keys[np.flatnonzero(~known)[0]])
            raise InvariantViolation(
                f"row {k >> 8} is handed over from worker {k & 0xFF}, which parked no copy of it"
            )
        return self.key_slots[at]

    def read(self, slots: np.ndarray, what: str) -> torch.Tensor:
        """``values`` or ``delta`` of ``slots``."""
        tensor = self.values if what == "values" else self.delta
        return tensor.index_select(0, index_tensor(slots, tensor.device))

    def release(self, keys: np.ndarray) -> None:
        """Forget parked ``keys`` (handed over); their slots are reused."""
        at, known = find_sorted(self.keys, np.unique(np.asarray(keys, np.int64)))
        if not known.any():
            return
        gone = at[known]
        slots = self.key_slots[gone]
        self.delta.index_fill_(0, index_tensor(slots, self.delta.device), 0.0)
        self.updates[slots] = 0
        self._free = np.concatenate([self._free, slots])
        keep = np.ones(self.keys.size, bool)
        keep[gone] = False
        self.keys, self.key_slots = self.keys[keep], self.key_slots[keep]

    def remaining(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, slots) of every copy still parked."""
        return self.keys.copy(), self.key_slots.copy()

    def _take_free(self, n: int) -> np.ndarray:
        if self._free.size < n:
            self._grow(n - self._free.size)
        taken, self._free = self._free[-n:], self._free[:-n]
        return taken

    def _grow(self, at_least: int) -> None:
        old = self.values.shape[0]
        extra = max(64, old, at_least)
        pad = torch.zeros(extra, self.values.shape[1], dtype=self.values.dtype,
                          device=self.values.device)  # fmt: skip
        self.values = torch.cat([self.values, pad])
        self.delta = torch.cat([self.delta, pad.clone()])
        self.version = np.concatenate([self.version, np.zeros(extra, np.int64)])
        self.updates = np.concatenate([self.updates, np.zeros(extra, np.int64)])
        self._free = np.concatenate([np.arange(old + extra - 1, old - 1, -1), self._free])
