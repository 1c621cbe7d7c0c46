"""Parked copies (herald-plus's direct transfers): a copy parked again keeps the newer value and
the sum of the deltas; a handed-over copy is forgotten and its slot reused clean."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from heraldbench.platform.exceptions import InvariantViolation
from heraldbench.platform.train.parked import ParkedCopies, apply_handed


def _rows(*values: float) -> torch.Tensor:
    return torch.tensor([[v, v] for v in values], dtype=torch.float64)


def test_parking_again_keeps_the_newer_value_and_adds_the_delta():
    parked = ParkedCopies(2, torch.float64, torch.device("cpu"))
    parked.park(np.array([70, 10]), _rows(1, 2), _rows(0.1, 0.2), np.array([3, 4]), np.array([1, 1]))
    parked.park(np.array([70]), _rows(5), _rows(0.5), np.array([6]), np.array([2]))
    slots = parked.slots(np.array([10, 70]))
    assert parked.read(slots, "values")[:, 0].tolist() == [2, 5]
    assert parked.read(slots, "delta")[:, 0].tolist() == pytest.approx([0.2, 0.6])
    assert parked.version[slots].tolist() == [4, 6] and parked.updates[slots].tolist() == [1, 3]
    with pytest.raises(InvariantViolation, match="row 0 is handed over from worker 11"):
        parked.slots(np.array([11]))


def test_a_released_copy_is_forgotten_and_its_slot_reused_clean():
    parked = ParkedCopies(2, torch.float64, torch.device("cpu"))
    parked.park(np.arange(100), _rows(*range(100)), _rows(*range(100)))  # grows past 64 slots
    parked.release(np.arange(0, 100, 2))
    assert len(parked) == 50 and parked.remaining()[0].tolist() == list(range(1, 100, 2))
    parked.park(np.array([1000]), _rows(7), _rows(0.5))
    slot = parked.slots(np.array([1000]))
    assert parked.read(slot, "delta")[0, 0].item() == 0.5  # not added to an old delta


def test_a_reader_installs_the_value_plus_its_own_delta_and_takes_the_carried_one():
    values, delta = _rows(0, 0, 0), _rows(0, 0.25, 0)
    apply_handed(values, delta, np.array([1, 2]), np.array([True, False]), _rows(3, 4), _rows(0.5))
    assert values[:, 0].tolist() == [0, 3.25, 4]
    assert delta[:, 0].tolist() == [0, 0.75, 0]
