"""Copies parked by direct transfers (herald-plus), held by their senders until handed over.

A ``Send.DIRECT`` of (k, v) parks v's copy of k here: its value and its pending delta (and, for
the emulated executor's consistency checks, the updates the copy holds and those its delta
holds). A copy parked again before it was handed over keeps the newer value and the sum of the
deltas. The stream's hand-overs (:class:`~heraldbench.platform.contract.IterationDecisions`)
say when a parked copy leaves; one parked for good at the end of a run is flushed with the
dirty copies.
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform.contract import IterationDecisions, record_keys
from heraldbench.platform.exceptions import InvariantViolation

__all__ = ["ParkedCopies", "apply_handed", "handed_keys"]


def handed_keys(dec: IterationDecisions) -> np.ndarray:
    """The parked copy each hand-over of ``dec`` takes: (row, sender) keys."""
    return record_keys(dec.handed_ids, dec.handed_from)


def apply_handed(values: torch.Tensor, delta: torch.Tensor, slots: np.ndarray, base: np.ndarray,
                 carry: np.ndarray, base_values: torch.Tensor,
                 handed_deltas: torch.Tensor) -> None:  # fmt: skip
    """A reader's side of its hand-overs, in record order (a reader's base first): a base copy
    is installed as a pull is, ``value + delta``; a carried delta becomes the reader's pending
    update, and is added to its value where it did not come with it (another sender's, or a
    hit's).

    Args:
        values, delta: the reader's copies and their pending deltas; slots: (n,) the slot of
            each hand-over's row there.
        base, carry: (n,) the hand-overs' flags; base_values: the values of the base ones;
        handed_deltas: the deltas of the carried ones (every hand-over but a base may carry).
    """
    device = values.device

    def on_device(array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array)).to(device)

    slots = np.asarray(slots, np.int64)
    at_base = on_device(slots[base])
    values.index_copy_(0, at_base, base_values + delta.index_select(0, at_base))
    added = ~base[carry]  # carried onto another sender's value, or onto the reader's own copy
    values.index_add_(0, on_device(slots[carry][added]), handed_deltas[on_device(added)])
    delta.index_add_(0, on_device(slots[carry]), handed_deltas)


class ParkedCopies:
    """Parked copies by (row, sender), in slots of two growable (n, D) tensors.

    Args:
        dim, dtype, device: of the values.
    """

    def __init__(self, dim: int, dtype: torch.dtype, device: torch.device) -> None:
        self.slot: dict[int, int] = {}
        self.values = torch.zeros(0, dim, dtype=dtype, device=device)
        self.delta = torch.zeros_like(self.values)
        self.version = np.zeros(0, np.int64)  # updates the parked value holds
        self.updates = np.zeros(0, np.int64)  # updates the parked delta holds
        self._free: list[int] = []

    def __len__(self) -> int:
        return len(self.slot)

    def park(self, keys: np.ndarray, values: torch.Tensor, deltas: torch.Tensor,
             version: np.ndarray | None = None, updates: np.ndarray | None = None) -> None:  # fmt: skip
        """Park ``values`` and ``deltas`` (one row per key); a key parked already keeps the newer
        value and adds the delta."""
        slots = np.array([self._slot_for(int(k)) for k in keys], np.int64)
        index = torch.from_numpy(slots).to(self.values.device)
        self.values.index_copy_(0, index, values)
        self.delta.index_add_(0, index, deltas)
        if version is not None and updates is not None:
            self.version[slots] = version
            self.updates[slots] += updates

    def slots(self, keys: np.ndarray) -> np.ndarray:
        """Slots of parked ``keys``; raises if one is not parked."""
        try:
            return np.array([self.slot[int(k)] for k in keys], np.int64)
        except KeyError as missing:
            k = int(missing.args[0])
            raise InvariantViolation(
                f"row {k >> 8} is handed over from worker {k & 0xFF}, which parked no copy of it"
            ) from None

    def read(self, slots: np.ndarray, what: str) -> torch.Tensor:
        """``values`` or ``delta`` of ``slots``."""
        tensor = self.values if what == "values" else self.delta
        return tensor.index_select(0, torch.from_numpy(slots).to(tensor.device))

    def release(self, keys: np.ndarray) -> None:
        """Forget parked ``keys`` (handed over); their slots are reused."""
        for k in np.unique(keys).tolist():
            slot = self.slot.pop(k)
            self.delta[slot] = 0
            self.updates[slot] = 0
            self._free.append(slot)

    def remaining(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, slots) of every copy still parked."""
        keys = np.fromiter(self.slot, np.int64, len(self.slot))
        return keys, np.array([self.slot[int(k)] for k in keys], np.int64)

    def _slot_for(self, key: int) -> int:
        slot = self.slot.get(key)
        if slot is not None:
            return slot
        if not self._free:
            self._grow()
        slot = self.slot[key] = self._free.pop()
        return slot

    def _grow(self) -> None:
        old = self.values.shape[0]
        extra = max(64, old)
        pad = torch.zeros(extra, self.values.shape[1], dtype=self.values.dtype,
                          device=self.values.device)  # fmt: skip
        self.values = torch.cat([self.values, pad])
        self.delta = torch.cat([self.delta, pad.clone()])
        self.version = np.concatenate([self.version, np.zeros(extra, np.int64)])
        self.updates = np.concatenate([self.updates, np.zeros(extra, np.int64)])
        self._free.extend(range(old + extra - 1, old - 1, -1))
