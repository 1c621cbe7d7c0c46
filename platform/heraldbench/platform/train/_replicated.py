"""FAE's replicated hot table during a hot phase.

Every worker holds a replica of the hot rows H and the replicas stay identical (each applies the
all-reduced gradient), so one table on the device stands for all W of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from heraldbench.platform.exceptions import InvariantViolation
from heraldbench.platform.train.rows import RowStore, index_tensor, reduce_rows

__all__ = ["ReplicatedTable"]


@dataclass
class ReplicatedTable:
    """H's rows, values and update counts, and where each global row sits in H.

    Attributes:
        rows: (|H|,) global ids of the hot rows.
        table: (|H|, D) their values, on the device.
        version: (|H|,) updates each hot row holds (see the executor's consistency check).
        position: (R,) index in H of every global row, -1 for a cold one.
    """

    rows: np.ndarray
    table: torch.Tensor
    version: np.ndarray
    position: np.ndarray

    @classmethod
    def load(cls, rows: np.ndarray, ps: RowStore, ps_version: np.ndarray) -> ReplicatedTable:
        """Every worker loads H from the PS (the phase switch into a hot phase)."""
        rows = np.asarray(rows, np.int64)
        position = np.full(ps.table.shape[0], -1, np.int64)
        position[rows] = np.arange(rows.size)
        return cls(rows, ps.ps_rows(rows), ps_version[rows].copy(), position)

    def locate(self, ids: np.ndarray, iteration: int) -> tuple[np.ndarray, np.ndarray]:
        """(distinct positions in H read by a (B, F) batch, (B, F) index into them)."""
        local = self.position[ids]
        if (local < 0).any():
            raise InvariantViolation(f"iteration {iteration}: a hot batch reads a cold row")
        unique, inverse = np.unique(local, return_inverse=True)
        return unique, inverse.reshape(local.shape)

    def read(self, unique: np.ndarray) -> torch.Tensor:
        return self.table.index_select(0, index_tensor(unique, self.table.device))

    def update(self, unique: np.ndarray, inverse: torch.Tensor, sample_grad: torch.Tensor,
               lr: float) -> None:  # fmt: skip
        """SGD with the whole batch's gradient: what every replica applies after the all-reduce."""
        flat = sample_grad.reshape(-1, sample_grad.shape[-1])
        grad = reduce_rows(inverse, flat, unique.size)
        self.table.index_add_(0, index_tensor(unique, self.table.device), grad, alpha=-lr)
        self.version[unique] += 1

    def store(self, ps: RowStore, ps_version: np.ndarray) -> None:
        """One replica goes back to the PS (the phase switch out of a hot phase)."""
        ps.set_ps_rows(self.rows, self.table)
        ps_version[self.rows] = self.version
