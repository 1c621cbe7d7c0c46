"""The emulated logically replicated cache (BagPipe), driven by the decision stream.

Every worker holds a replica of every cached row. A synced row's replicas apply the all-reduced
gradient, the sum over the global batch; a no-sync row (read once, not again before it is
written back) is updated by its one reader, and no other replica reads it before then. Either
way the value a reader sees is what one table updated with the whole batch's gradient holds,
so one (R, D) table on the device stands for all W replicas
(``replica``; a row's values there mean something only while it is cached or staged), and the
PS is the host table. Per iteration (the order of
:class:`~heraldbench.platform.contract.IterationDecisions`):

(a) ``Send.EVICT`` rows are written back, ``PS[k] = replica[k]``; evicted rows leave the cache;
(b) prefetched rows and rows fetched on demand (``Read.MISS``) are loaded, ``replica[k] = PS[k]``;
    a fetched row that the stream releases after the iteration is *staged*: outside the K slots;
(c) the batch reads ``replica``; after the backward pass, ``replica[k] -= lr·g`` with g summed
    over the batch (the all-reduce);
(d) ``Send.RELEASE`` rows (the staged ones) are written back and leave.

Consistency is checked as in :mod:`.executor`: per-row update counts for the model (``latest``),
the PS and the replica, so a read of a replica missing an update, a pull from a PS missing one,
or an eviction of unsent updates raises :class:`InvariantViolation`; the cache never holds more
than K rows (:class:`CapacityError`).
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform.contract import IterationDecisions, Read, Send
from heraldbench.platform.counters import TALLY, tally_of
from heraldbench.platform.exceptions import CapacityError, InvariantViolation
from heraldbench.platform.train.rows import index_tensor, reduce_rows
from heraldbench.platform.train.runtime import to_device

__all__ = ["ReplicatedCluster"]


class ReplicatedCluster:
    """The PS table and one replicated cache of K rows, driven by decisions.

    Args:
        table: (R, D) initial embedding table; becomes the PS (host memory, in its dtype).
        workers: W.
        cache_rows: K, rows every replica holds.
        device: where the replica lives.
        lr: the embeddings' SGD learning rate.
    """

    def __init__(self, table: torch.Tensor, *, workers: int, cache_rows: int,
                 device: torch.device, lr: float):  # fmt: skip
        rows = table.shape[0]
        self.workers, self.device, self.lr, self.capacity = workers, device, lr, cache_rows
        self.ps = table.detach().to("cpu").contiguous().clone()
        self.replica = torch.zeros_like(self.ps, device=device)
        self.cached = np.zeros(rows, bool)
        self.latest = np.zeros(rows, np.int64)  # updates applied to each row
        self.ps_version = np.zeros(rows, np.int64)
        self.copy_version = np.zeros(rows, np.int64)  # updates the replica holds
        self.tally = np.zeros(len(TALLY))
        self.max_staleness = 0
        self._unique = np.zeros(0, np.int64)
        self._inverse = torch.zeros(0, dtype=torch.int64)

    def prepare(self, dec: IterationDecisions) -> tuple[torch.Tensor, torch.Tensor]:
        """Steps (a) and (b), then gather what the batch reads: the (U, D) distinct rows and
        the (B, F) index of each sample's field into them."""
        self.tally[:] = tally_of(dec, self.workers)
        evict = dec.sent_how == Send.EVICT
        self._write_back(dec.sent_ids[evict])
        self._evict(np.unique(dec.evicted_ids))
        kinds = dec.touched_kind
        fetched = dec.touched_ids[kinds == Read.MISS]
        if np.count_nonzero(kinds == Read.UPDATE):
            raise InvariantViolation(f"iteration {dec.iteration}: an update pull of a replica")
        loaded = np.union1d(dec.prefetch_ids, fetched).astype(np.int64)
        self._load(loaded)
        staged = dec.sent_ids[dec.sent_how == Send.RELEASE].astype(np.int64)
        self.cached[loaded] = True
        self.cached[staged] = False
        held = int(np.count_nonzero(self.cached))
        if held > self.capacity:
            raise CapacityError(f"iteration {dec.iteration}: the replicated cache holds {held} "
                                f"rows, more than its {self.capacity}")  # fmt: skip
        unique, inverse = np.unique(dec.batch.ids, return_inverse=True)
        self._unique = unique.astype(np.int64)
        lag = self.latest[self._unique] - self.copy_version[self._unique]
        if lag.any():
            self.max_staleness = max(self.max_staleness, int(lag.max()))
            raise InvariantViolation(f"iteration {dec.iteration}: {np.count_nonzero(lag)} reads "
                                     "of outdated replicas")  # fmt: skip
        self._inverse = index_tensor(inverse.reshape(dec.batch.ids.shape), self.device)
        return self.replica.index_select(0, index_tensor(self._unique, self.device)), self._inverse

    def apply_gradient(self, sample_grad: torch.Tensor) -> None:
        """Step (c): SGD with the whole batch's gradient, what every replica applies."""
        flat = sample_grad.reshape(-1, sample_grad.shape[-1])
        grad = reduce_rows(self._inverse, flat, self._unique.size)
        self.replica.index_add_(0, index_tensor(self._unique, self.device), grad, alpha=-self.lr)
        self.latest[self._unique] += 1
        self.copy_version[self._unique] += 1

    def finish(self, dec: IterationDecisions) -> None:
        """Step (d): staged rows are written back right after the update."""
        release = dec.sent_how == Send.RELEASE
        self._write_back(dec.sent_ids[release])

    def flush(self) -> int:
        """Write back every cached row holding updates the PS lacks; returns the rows sent."""
        dirty = np.flatnonzero(self.cached & (self.copy_version > self.ps_version))
        self._write_back(dirty)
        return int(dirty.size)

    def current_table(self) -> torch.Tensor:
        """The model's table as of now: the PS with the cached rows' values."""
        table = self.ps.clone()
        rows = np.flatnonzero(self.cached)
        table[rows] = self.replica[index_tensor(rows, self.device)].cpu()
        return table

    def _write_back(self, rows: np.ndarray) -> None:
        rows = rows.astype(np.int64)
        if not rows.size:
            return
        self.ps[rows] = self.replica[index_tensor(rows, self.device)].cpu()
        self.ps_version[rows] = self.copy_version[rows]

    def _evict(self, rows: np.ndarray) -> None:
        rows = rows.astype(np.int64)
        unsent = self.copy_version[rows] != self.ps_version[rows]
        absent = ~self.cached[rows]
        if unsent.any() or absent.any():
            k = int(rows[np.flatnonzero(unsent | absent)[0]])
            why = "which is not cached" if not self.cached[k] else "whose updates were never sent"
            raise InvariantViolation(f"row {k} evicted from the replicated cache, {why}")
        self.cached[rows] = False

    def _load(self, rows: np.ndarray) -> None:
        if not rows.size:
            return
        behind = self.latest[rows] != self.ps_version[rows]
        if behind.any():
            k = int(rows[np.flatnonzero(behind)[0]])
            raise InvariantViolation(f"row {k} pulled from a PS missing its latest update")
        self.replica[index_tensor(rows, self.device)] = to_device(self.ps[rows].numpy(),
                                                                  self.device)
        self.copy_version[rows] = self.ps_version[rows]
