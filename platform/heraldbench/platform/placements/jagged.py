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
        return cls.from_columns(ids, offsets, np.ones(len(offsets), np.int64))

    @classmethod
    def from_columns(cls, ids: np.ndarray, offsets: np.ndarray, widths: np.ndarray,
                     lengths: np.ndarray | None = None) -> JaggedIds:
        """From a chunk's (n, Σ widths) global ids, table ``t``'s ``widths[t]`` ids in consecutive
        columns (a trace's layout: ``TableLayout.table_widths``), and the tables' first ids; with
        a ragged chunk's (n, F) ``lengths`` (``SampleChunk.lengths``), its pads left out."""
        ids = np.asarray(ids, np.int64)
        ends = np.cumsum(widths)
        starts = ends - widths
        values = []
        for t, (a, b) in enumerate(zip(starts, ends)):
            block = ids[:, a:b] - offsets[t]
            if lengths is not None and b - a > 1:
                block = block[np.arange(b - a)[None, :] < lengths[:, t:t + 1]]
            values.append(block.ravel())
        per_table = (np.repeat(np.asarray(widths, np.int32)[:, None], ids.shape[0], axis=1)
                     if lengths is None else np.asarray(lengths, np.int32).T)
        return cls(np.ascontiguousarray(per_table),
                   np.ascontiguousarray(np.concatenate(values), dtype=np.int32))

    def table_starts(self) -> np.ndarray:
        """Where each table's values begin, shape (F + 1,)."""
        return np.concatenate([[0], np.cumsum(self.lengths.sum(1))]).astype(np.int64)
