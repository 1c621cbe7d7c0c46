"""The embedding rows one rank holds under a placement, and their update.

A rank holds, per column shard, exactly the rows the placement gives it
(:meth:`~heraldbench.platform.placements.Placement.held_by`: its own rows, and its copies of
rows replicated on every host or every device), only those columns, as plain tensors.
Modelling assumption: embeddings are trained by plain SGD (as the reference, ``train_plain``);
a placement's optimizer state (row-wise Adagrad, counted in its memory) is not trained here.
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform.distributed.sharded._ring import (
    cross_host_allreduce,
    hierarchical_allreduce,
)
from heraldbench.platform.distributed.sharded._routes import Routes, ShardSlot
from heraldbench.platform.placements import Placement, Scope

__all__ = ["HeldRows"]


class HeldRows:
    """Per shard slot: the rows held (ascending, within their table) and their values."""

    def __init__(self, placement: Placement, rank: int, slots: tuple[ShardSlot, ...],
                 table: torch.Tensor, offsets: np.ndarray) -> None:
        self.placement, self.rank, self.slots = placement, rank, slots
        self.rows = [placement.held_by(rank, s.table, s.shard) for s in slots]
        self.values = [table[torch.from_numpy(offsets[s.table] + rows), s.column:
                             s.column + s.width].clone()
                       for s, rows in zip(slots, self.rows, strict=True)]

    def positions(self, slot: int, rows: np.ndarray) -> torch.Tensor:
        """Where ``rows`` (all held here) are in the slot's values."""
        at = np.searchsorted(self.rows[slot], rows)
        if at.size and (at.max() >= self.rows[slot].size
                        or not np.array_equal(self.rows[slot][at], rows)):
            raise AssertionError(f"rank {self.rank} asked for rows it does not hold")
        return torch.from_numpy(at)

    def serve(self, routes: Routes, dim: int) -> torch.Tensor:
        """(vectors, dim): every vector this rank serves, its rows summed over its columns (a
        pooled table's partial sum, a sequence's row); zero elsewhere."""
        dtype = self.values[0].dtype if self.values else torch.float64
        out = torch.zeros(routes.slot.size, dim, dtype=dtype)
        for slot, (reads, vectors) in self._served(routes):
            s = self.slots[slot]
            part = torch.zeros(routes.slot.size, s.width, dtype=dtype)
            part.index_add_(0, vectors, self.values[slot][self.positions(slot, reads)])
            out[:, s.column: s.column + s.width] += part
        return out

    def _served(self, routes: Routes):
        """Per slot, the reads this rank serves and the vectors they go into."""
        mine = routes.server[routes.occ_vector] == self.rank
        for slot in range(len(self.slots)):
            keep = mine & (routes.occ_slot == slot)
            if keep.any():
                yield slot, (routes.occ_row[keep], torch.from_numpy(routes.occ_vector[keep]))

    def gradients(self, routes: Routes, grads: torch.Tensor) -> list[torch.Tensor]:
        """Per slot, the gradient of every held row from the vectors' gradients ``grads`` (the
        rows of the vectors this rank served): each read of a row gets its vector's."""
        out = [torch.zeros_like(v) for v in self.values]
        for slot, (reads, vectors) in self._served(routes):
            s = self.slots[slot]
            out[slot].index_add_(0, self.positions(slot, reads),
                                 grads[vectors, s.column: s.column + s.width])
        return out

    def sync(self, meter, routes: Routes, grads: list[torch.Tensor]) -> None:
        """Sum the gradients of replicated rows read in the iteration over their holders (in
        place): rows on every device hierarchically, rows on every host across hosts."""
        topo = self.placement.topology
        every, per_host = self._replicated(routes)
        for picked, reduce in ((every, hierarchical_allreduce), (per_host, cross_host_allreduce)):
            parts = [grads[slot][self.positions(slot, rows)] for slot, rows in picked]
            flat = (torch.cat([p.reshape(-1) for p in parts]) if parts
                    else grads[0].new_zeros(0) if grads else torch.zeros(0, dtype=torch.float64))
            summed, at = reduce(meter, flat, topo), 0
            for (slot, rows), part in zip(picked, parts, strict=True):
                grads[slot][self.positions(slot, rows)] = summed[at: at + part.numel()].view_as(part)
                at += part.numel()

    def _replicated(self, routes: Routes):
        """Per slot, the replicated rows read in the iteration that this rank holds: on every
        device (all ranks alike), on every host (this rank's local index)."""
        local = self.rank % self.placement.topology.devices_per_host
        every, per_host = [], []
        for slot, s in enumerate(self.slots):
            part = self.placement.tables[s.table].shards[s.shard]
            rows = np.unique(routes.occ_row[routes.occ_slot == slot])
            scope, owner = part.scope[rows], part.owner[rows]
            every.append((slot, rows[scope == Scope.EVERY_DEVICE]))
            per_host.append((slot, rows[(scope == Scope.PER_HOST) & (owner == local)]))
        return every, per_host

    def step(self, grads: list[torch.Tensor], lr: float) -> None:
        for values, grad in zip(self.values, grads, strict=True):
            values.add_(grad, alpha=-lr)
