"""The parameter server, sharded: row k lives on rank ``owner(k)``, in a dense local table.

Rows are dealt round-robin over the PS ranks (k mod P), which spreads every embedding table's
hot head over all of them (a contiguous split would put a table's head on one rank).
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["PSLayout", "PSShard"]


class PSLayout:
    """Which rank owns which row.

    Args:
        rows: R, rows of the global table.
        ps_ranks: the ranks holding shards, in shard order (the workers, or dedicated ranks).
    """

    def __init__(self, rows: int, ps_ranks: list[int]) -> None:
        self.rows = rows
        self.ranks = np.asarray(ps_ranks, np.int64)
        self.count = len(ps_ranks)

    def owner(self, ids: np.ndarray) -> np.ndarray:
        """The rank owning each row of ``ids``."""
        return self.ranks[np.asarray(ids, np.int64) % self.count]

    def shard_rows(self, shard: int) -> np.ndarray:
        """Global ids of the rows of shard ``shard``, in local order."""
        return np.arange(shard, self.rows, self.count, dtype=np.int64)

    def shard_of(self, rank: int) -> int | None:
        hits = np.flatnonzero(self.ranks == rank)
        return int(hits[0]) if hits.size else None


class PSShard:
    """The rows one rank owns; a rank holding no shard has an empty one.

    Args:
        layout: the row ownership.
        rank: this rank.
        table: (R, D) the initial global table (only this rank's rows are kept).
        device: where the shard lives.
    """

    def __init__(self, layout: PSLayout, rank: int, table: torch.Tensor,
                 device: torch.device) -> None:  # fmt: skip
        self.layout = layout
        shard = layout.shard_of(rank)
        self.global_ids = layout.shard_rows(shard) if shard is not None else np.zeros(0, np.int64)
        index = torch.from_numpy(self.global_ids)
        self.values = table.index_select(0, index).to(device).contiguous()

    def local_index(self, ids: np.ndarray) -> torch.Tensor:
        local = np.asarray(ids, np.int64) // self.layout.count
        return torch.from_numpy(local).to(self.values.device)

    def read(self, ids: np.ndarray) -> torch.Tensor:
        """(n, D) the PS values of ``ids`` (rows this rank owns)."""
        return self.values.index_select(0, self.local_index(ids))

    def add(self, ids: np.ndarray, deltas: torch.Tensor) -> None:
        """``PS[k] += delta`` (repeated rows add up: co-writers' shares)."""
        if len(ids):
            self.values.index_add_(0, self.local_index(ids), deltas)

    def assign(self, ids: np.ndarray, values: torch.Tensor) -> None:
        """``PS[k] = value`` (a replica written back whole)."""
        if len(ids):
            self.values.index_copy_(0, self.local_index(ids), values)
