"""The rows the logically replicated cache (BagPipe) moves, as decisions of the stream.

The replicated state machine (:mod:`._replicated`) counts with kernels that keep no lists; for
an executor that moves rows it records, per iteration, what its cleanup evicted, wrote back and
prefetched, and which rows its run fetched on demand, admitted or staged for the iteration only.
:meth:`Moves.decisions` turns one iteration's record into the contract's
:class:`~heraldbench.platform.contract.IterationDecisions`, with the same counts as the kernels:

* every replica loads a prefetched row: W copies of :attr:`Read.PREFETCH`;
* a worker reading a row that is not in the cache pulls it (:attr:`Read.MISS`); every other
  read is a :attr:`Read.HIT`; an admitted row is loaded by the other replicas too
  (:attr:`Read.PREFETCH`, the "replica fill");
* an expired row leaves every replica; when dirty it is written back once (:attr:`Send.EVICT`),
  by the worker whose replica is current: the one that last updated it when that update was a
  no-sync one, else replica 0 (the replicas are identical after the all-reduce:
  :class:`~heraldbench.platform.contract.SingleWriters`); a row staged for the iteration only is
  written back after the update (:attr:`Send.RELEASE`) by its first reader (the lowest-numbered
  worker that pulled it: only its readers hold it);
* ``allreduce_rows`` is the sync-now plus sync-later rows, named by class in ``sync_*_ids``;
* the batch's cached rows whose lease the run extended are ``lease_ids`` with their new end.
"""

from __future__ import annotations

import numpy as np

from heraldbench.platform.contract import IterationDecisions, Read, Send, SingleWriters
from heraldbench.platform.data import SampleChunk
from heraldbench.platform.sim._replicated_kernels import (
    CLASS_LATER,
    CLASS_NO_SYNC,
    CLASS_NOW,
    DIRTY,
    IN,
)

__all__ = ["Moves"]

_NONE = np.zeros(0, np.int32)


class Moves:
    """One iteration's moves at a time, plus the batches and partitions of the window.

    Args:
        slots: batches kept (the look-ahead window plus one).
        workers: W.
    """

    def __init__(self, slots: int, workers: int) -> None:
        self.workers = workers
        self.batches: list[SampleChunk | None] = [None] * slots
        self.assigns: list[np.ndarray | None] = [None] * slots
        self.writers: SingleWriters | None = None  # made once the table's rows are known
        self.start(0)

    def start(self, iteration: int) -> None:
        self.iteration = iteration
        self.evicted = self.written = self.prefetched = _NONE
        self.fetched = self.admitted = self.staged = _NONE
        self.allreduce_rows = 0
        self.rows = self.sync_now = self.sync_later = self.no_sync = self.leased = _NONE
        self.lease_ends = np.zeros(0, np.int64)
        self._candidates = _NONE

    def enqueue(self, j: int, batch: SampleChunk, assign: np.ndarray) -> None:
        slot = j % len(self.batches)
        self.batches[slot], self.assigns[slot] = batch, assign

    def before_evict(self, pending: np.ndarray, state: np.ndarray) -> None:
        rows = np.unique(pending)
        self.evicted = rows[(state[rows] & IN) != 0]
        self.written = self.evicted[(state[self.evicted] & DIRTY) != 0]

    def before_prefetch(self, uniq: np.ndarray, counts: np.ndarray, first: int, stop: int,
                        state: np.ndarray) -> None:  # fmt: skip
        slots = uniq.shape[0]
        parts = [uniq[j % slots, : counts[j % slots]] for j in range(first, stop)]
        rows = np.unique(np.concatenate(parts)) if parts else _NONE
        self._candidates = rows[(state[rows] & IN) == 0]

    def after_prefetch(self, state: np.ndarray) -> None:
        rows = self._candidates
        self.prefetched = rows[(state[rows] & IN) != 0]

    def before_run(self, rows: np.ndarray, state: np.ndarray) -> None:
        self.rows = rows.copy()
        self.fetched = rows[(state[rows] & IN) == 0].copy()

    def after_run(self, state: np.ndarray, classes: np.ndarray, latest: np.ndarray,
                  expiring: np.ndarray, allreduce_rows: int) -> None:  # fmt: skip
        """Record the run's fetches, sync classes (``classes``, per row of :meth:`before_run`)
        and leases: the batch's cached rows not ``expiring`` keep theirs until ``latest``."""
        resident = (state[self.fetched] & IN) != 0
        self.admitted, self.staged = self.fetched[resident], self.fetched[~resident]
        self.allreduce_rows = allreduce_rows
        rows, klass = self.rows, classes[: self.rows.size]
        self.sync_now, self.sync_later = rows[klass == CLASS_NOW], rows[klass == CLASS_LATER]
        self.no_sync = rows[klass == CLASS_NO_SYNC]
        kept = ((state[rows] & IN) != 0) & ~np.isin(rows, expiring)
        self.leased = rows[kept]
        self.lease_ends = latest[self.leased].astype(np.int64)

    def decisions(self, total_rows: int) -> IterationDecisions:
        """The decisions of the iteration recorded since :meth:`start`."""
        b, workers = self.iteration, self.workers
        slot = b % len(self.batches)
        batch, assign = self.batches[slot], self.assigns[slot]
        assert batch is not None and assign is not None
        pairs = np.unique(assign[:, None].astype(np.int64) * total_rows + batch.ids)
        read_w, read_k = pairs // total_rows, (pairs % total_rows).astype(np.int32)
        kind = np.where(np.isin(read_k, self.fetched), Read.MISS, Read.HIT).astype(np.int8)
        fill_k, fill_w = [], []
        for w in range(workers):
            absent = np.setdiff1d(self.admitted, read_k[read_w == w], assume_unique=True)
            fill_k.append(absent)
            fill_w.append(np.full(absent.size, w, np.int8))
        every = np.arange(workers, dtype=np.int8)
        sent_ids = np.concatenate([self.written, self.staged]).astype(np.int32)
        if self.writers is None:
            self.writers = SingleWriters(total_rows)
        sent_w = np.concatenate([self.writers.writers(self.written).astype(np.int8),
                                 _first_reader(self.staged, read_k, read_w)])  # fmt: skip
        how = [np.full(self.written.size, Send.EVICT), np.full(self.staged.size, Send.RELEASE)]
        dec = IterationDecisions(
            iteration=b,
            batch=batch,
            assign=assign,
            replicated=False,
            touched_ids=read_k,
            touched_w=read_w.astype(np.int8),
            touched_kind=kind,
            evicted_ids=np.repeat(self.evicted, workers).astype(np.int32),
            evicted_w=np.tile(every, self.evicted.size),
            sent_ids=sent_ids,
            sent_w=sent_w,
            sent_how=np.concatenate(how).astype(np.int8),
            prefetch_ids=np.concatenate(
                [np.repeat(self.prefetched, workers), *fill_k]
            ).astype(np.int32),
            prefetch_w=np.concatenate([np.tile(every, self.prefetched.size), *fill_w]),
            allreduce_rows=self.allreduce_rows,
            sync_now_ids=self.sync_now,
            sync_later_ids=self.sync_later,
            no_sync_ids=self.no_sync,
            lease_ids=self.leased,
            lease_ends=self.lease_ends,
        )
        self.writers.step(dec)
        return dec


def _first_reader(rows: np.ndarray, read_k: np.ndarray, read_w: np.ndarray) -> np.ndarray:
    """The lowest worker reading each of ``rows`` (``read_k``/``read_w`` sorted by worker)."""
    keys, first = np.unique(read_k, return_index=True)
    return read_w[first[np.searchsorted(keys, rows)]].astype(np.int8)
