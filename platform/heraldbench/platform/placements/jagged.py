"""Ids per table per sample, ragged, as TorchRec's ``KeyedJaggedTensor`` holds them: per table
(key) a length per sample, and the values of every table one after the other (table-major,
samples in order within a table). A one-hot trace is the case of every length 1."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from heraldbench.platform.exceptions import DataError

__all__ = ["JaggedIds"]


@dataclass(frozen=True)
class JaggedIds:
    """Attributes:
    lengths: (F, n) int32, ids of sample ``j`` in table ``t``.
    values: int32 local row ids (row within its table), table-major.
    """

    lengths: np.ndarray
    values: np.ndarray

    def __post_init__(self) -> None:
        if self.lengths.ndim != 2 or int(self.lengths.sum()) != self.values.shape[0]:
            raise DataError(f"jagged ids: lengths {self.lengths.shape} sum to "
                            f"{int(self.lengths.sum())}, values hold {self.values.shape[0]}")

    @property
    def samples(self) -> int:
        return int(self.lengths.shape[1])

    @classmethod
    def from_one_hot(cls, ids: np.ndarray, offsets: np.ndarray) -> JaggedIds:
        """From a one-hot chunk's (n, F) global ids and the tables' first global ids."""
        local = (np.asarray(ids, np.int64) - np.asarray(offsets, np.int64)).T
        lengths = np.ones(local.shape, np.int32)
        return cls(lengths, np.ascontiguousarray(local.ravel(), dtype=np.int32))

    def table_starts(self) -> np.ndarray:
        """Where each table's values begin, shape (F + 1,)."""
        return np.concatenate([[0], np.cumsum(self.lengths.sum(1))]).astype(np.int64)
