"""The emulated cluster: W workers' caches and the PS table on one device, and the decision
stream carried out on real rows.

Per iteration (docs/semantics.md; the stream of :func:`heraldbench.platform.sim.decisions`):

(a) evictions: a ``Send.EVICT`` of (k, w) writes w's pending delta to the PS,
    ``PS[k] += delta_w[k]``; every evicted copy then leaves its slot;
(b) pulls (``Read.MISS`` / ``Read.UPDATE``): ``cache_w[k] = PS[k] + delta_w[k]``. The delta is 0
    for a strict scheduler at that point; HET keeps its pending updates across a refresh, which
    is exactly this formula;
(c) every sample reads its rows from *its* worker's cache (one gather of the distinct copies
    read, then ``rows[inverse]``); after the backward pass each copy's gradient g is summed over
    the batch and the copy is updated by plain SGD, ``cache_w[k] -= lr·g`` and
    ``delta_w[k] -= lr·g``. SGD is linear, so the PS receiving the sum of the deltas equals
    synchronous training;
(d) ``Send.UPDATE`` of (k, v): ``PS[k] += delta_v[k]; delta_v[k] = 0``. ``Send.DIRECT``
    parks v's copy and its delta (:mod:`~heraldbench.platform.train.parked`), and its next
    readers' pulls in (b) are hand-overs from it (the contract's ``handed_*``), not PS reads.

FAE's hot batches read one replicated table (the replicas are identical, so one tensor stands for
all of them), updated with the whole batch's gradient: that sum *is* the all-reduce. Entering a
hot phase loads it from the PS; leaving writes it back.

Consistency is checked, not assumed: every row carries a count of the updates applied to it
(``latest``), the PS and every copy the count they contain, so a read of a copy missing an update
is seen. A strict scheduler raises :class:`InvariantViolation` on the first one; HET and the
optimistic co-writer rule count them (``stale_reads``).
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform.contract import IterationDecisions, PhaseSwitch, Read, Send, record_keys
from heraldbench.platform.counters import TALLY, Tally, tally_of
from heraldbench.platform.exceptions import CapacityError, InvariantViolation
from heraldbench.platform.train import _slots
from heraldbench.platform.train._kernels import add_at, gather_inverse
from heraldbench.platform.train._replicated import ReplicatedTable
from heraldbench.platform.train.parked import ParkedCopies, apply_handed, handed_keys
from heraldbench.platform.train.rows import RowStore, index_tensor

__all__ = ["EmulatedCluster"]

_MISS = int(Read.MISS)


class EmulatedCluster:
    """The PS table, the workers' caches and their pending deltas, driven by decisions.

    Slots: worker w's cache is slots ``[w·K, (w+1)·K)`` of ``rows.cache`` (K = min(cache rows,
    table rows)); ``rows.delta`` holds each copy's updates the PS has not seen, slot for slot;
    ``slot_of[w, k]`` is the slot of worker w's copy of row k (-1: not cached).

    Args:
        table: (R, D) initial embedding table; becomes the PS (host memory, updated in place,
            in the table's dtype, which the caches share).
        workers: W.
        cache_rows: K, rows per worker cache.
        device: where the caches (and the replicated hot table) live.
        lr: the embeddings' SGD learning rate.
        strict: raise on a read of an outdated copy (every scheduler but HET, strict
            co-writer rule).
    """

    def __init__(self, table: torch.Tensor, *, workers: int, cache_rows: int,
                 device: torch.device, lr: float, strict: bool = True):  # fmt: skip
        rows = table.shape[0]
        self.workers, self.device, self.lr = workers, device, lr
        self.strict = strict
        self.capacity = min(cache_rows, rows)
        slots = workers * self.capacity
        self.rows = RowStore(table, slots, device)
        self.ps = self.rows.table  # the PS table (the same memory)
        self.slot_of = np.full((workers, rows), -1, np.int32)  # slot of (w, k), -1 if not cached
        self.slot_row = np.zeros(slots, np.int64)
        self.free = np.arange(slots, dtype=np.int64).reshape(workers, self.capacity)[:, ::-1].copy()
        self.free_top = np.full(workers, self.capacity, np.int64)  # free[w, :top] are free
        self.latest = np.zeros(rows, np.int64)  # updates applied to each row, by anyone
        self.ps_version = np.zeros(rows, np.int64)  # updates the PS holds
        self.copy_version = np.zeros(slots, np.int64)  # updates each copy holds
        self.pending = np.zeros(slots, np.int64)  # updates in each copy's delta
        self.pos_of_slot = np.zeros(slots, np.int64)
        self._taken = np.zeros(workers, np.int64)  # scratch: misses per worker
        self.hot: ReplicatedTable | None = None  # FAE's H while a hot phase runs
        self.parked = ParkedCopies(table.shape[1], table.dtype, device)
        self.tally = np.zeros(len(TALLY))
        self.max_staleness = 0
        self._rows_read = np.zeros(0, np.int64)  # global rows read this iteration (unique slots)
        self._slots_read = np.zeros(0, np.int64)
        self._hot_read: np.ndarray | None = None
        self._inverse = torch.zeros(0, dtype=torch.int64)

    # ---- one iteration ---------------------------------------------------------------------

    def prepare(self, dec: IterationDecisions) -> tuple[torch.Tensor, torch.Tensor]:
        """Steps (a) and (b), then gather what the batch reads.

        Returns:
            rows: (U, D) values of the distinct copies read (no grad).
            inverse: (B, F) int64 index of each sample's field into ``rows``; the batch's
                embeddings are ``rows[inverse]``, (B, F, D).
        """
        self.tally[:] = tally_of(dec, self.workers)
        if dec.phase is not None:
            self._switch_phase(dec.phase)
        if dec.replicated:
            return self._prepare_hot(dec)
        how = dec.sent_how
        evict = how == Send.EVICT
        self._send(dec.sent_ids[evict], dec.sent_w[evict])
        self._evict(dec.evicted_ids, dec.evicted_w)
        return self._gather(dec, self._pull(dec))

    def apply_gradient(self, sample_grad: torch.Tensor) -> None:
        """Step (c)'s embedding update: plain SGD on the copies read, mirrored in their deltas.

        Args:
            sample_grad: (B, F, D) gradient of the global batch's mean loss with respect to
                ``rows[inverse]``. It is summed per distinct copy here, which gives each row's
                gradient as a gather of unique rows would, without autograd's embedding
                backward (slower on CPU).
        """
        if self.hot is not None and self._hot_read is not None:
            self.hot.update(self._hot_read, self._inverse, sample_grad, self.lr)
            self.latest[self._rows_read] += 1  # distinct rows here
            return
        self.rows.sgd(self._slots_read, self._inverse, sample_grad, self.lr)
        # one update per copy read, so a row read by several workers counts one per writer
        _slots.count_updates(self._slots_read, self._rows_read, self.copy_version, self.pending,
                             self.latest)  # fmt: skip

    def finish(self, dec: IterationDecisions) -> None:
        """Step (d): the dirty copies that leave their worker after the update."""
        direct = dec.sent_how == Send.DIRECT
        pushed = (dec.sent_how != Send.EVICT) & ~direct
        self._send(dec.sent_ids[pushed], dec.sent_w[pushed])
        self._park(dec.sent_ids[direct].astype(np.int64), dec.sent_w[direct])

    def flush(self) -> int:
        """Write every pending delta (and a replicated table) to the PS; returns the copies sent
        (the simulator's flush push)."""
        dirty = np.flatnonzero(self.pending)
        self._send_slots(dirty, self.slot_row[dirty])
        keys, slots = self.parked.remaining()
        self.rows.add_rows(keys >> 8, self.parked.read(slots, "delta"))
        add_at(self.ps_version, keys >> 8, self.parked.updates[slots])
        self.parked.release(keys)
        sent = int(dirty.size + keys.size)
        if self.hot is not None:
            leave = PhaseSwitch(False, self.hot.rows)
            sent += leave.pushes()
            self._leave_hot()
        return sent

    def current_table(self) -> torch.Tensor:
        """The model's table as of now, without changing any state: the PS plus every pending
        delta (what a flush would leave), with the replicated rows during a hot phase."""
        dirty = np.flatnonzero(self.pending)
        table = self.rows.with_pending(dirty, self.slot_row[dirty])
        keys, slots = self.parked.remaining()
        self.rows.add_rows(keys >> 8, self.parked.read(slots, "delta"), table)
        if self.hot is not None:
            table[index_tensor(self.hot.rows, table.device)] = self.hot.table.to(table.device)
        return table

    # ---- steps ------------------------------------------------------------------------------

    def _slots_of(self, ids: np.ndarray, workers: np.ndarray, what: str) -> np.ndarray:
        """The slot of each (row, worker) copy; raises naming the first that is not held."""
        slots = np.empty(ids.size, np.int64)
        bad = _slots.lookup(ids, workers, self.slot_of, slots)
        if bad != _slots.OK:
            raise InvariantViolation(
                f"row {int(ids[bad])} {what} worker {int(workers[bad])}, which holds no copy"
            )
        return slots

    def _send(self, ids: np.ndarray, workers: np.ndarray) -> None:
        self._send_slots(self._slots_of(ids, workers, "sent from"), ids.astype(np.int64))

    def _send_slots(self, slots: np.ndarray, rows: np.ndarray) -> None:
        """PS[k] += delta; the copies are clean afterwards (their values are unchanged)."""
        if not slots.size:
            return
        self.rows.write_back(slots, rows)  # co-writers' shares add up
        _slots.settle(slots, rows, self.ps_version, self.pending)

    def _evict(self, ids: np.ndarray, workers: np.ndarray) -> None:
        fault, i = _slots.release(ids, workers, self.slot_of, self.pending, self.free,
                                  self.free_top)  # fmt: skip
        if fault:
            why = "which it does not hold" if fault == 1 else "whose updates were never written back"
            raise InvariantViolation(
                f"worker {int(workers[i])} evicted row {int(ids[i])}, {why}"
            )

    def _pull(self, dec: IterationDecisions) -> np.ndarray:
        """Pulls from the PS, then the hand-overs of parked copies (the other pulls); returns
        the slot of every touched record."""
        ids, workers = dec.touched_ids, dec.touched_w
        self._allocate(ids, workers, dec.touched_kind)
        touched = self._slots_of(ids, workers, "read by")
        slots, rows = np.empty(ids.size, np.int64), np.empty(ids.size, np.int64)
        count, keep_delta = _slots.pull_plan(touched, ids, dec.pulled_from_ps(), self.ps_version,
                                             self.pending, self.copy_version, slots, rows)  # fmt: skip
        if count:
            # HET: pending updates survive the refresh; a strict scheduler has none here.
            self.rows.load(slots[:count], rows[:count], keep_delta=keep_delta)
        if dec.handed_ids.size:
            self._take_handed(dec, touched[dec.handed_at])
        return touched

    def _park(self, ids: np.ndarray, workers: np.ndarray) -> None:
        """Direct transfers: each copy's value and delta are parked; the copy stays, clean."""
        if not ids.size:
            return
        slots = self._slots_of(ids, workers, "parked by")
        index = index_tensor(slots, self.device)
        self.parked.park(record_keys(ids, workers), self.rows.cache.index_select(0, index),
                         self.rows.delta.index_select(0, index), self.copy_version[slots],
                         self.pending[slots])  # fmt: skip
        self.rows.delta.index_fill_(0, index, 0.0)
        self.pending[slots] = 0

    def _take_handed(self, dec: IterationDecisions, slots: np.ndarray) -> None:
        """The readers' side of the hand-overs; ``slots``: each reader's slot for its row."""
        carry, keys = dec.handed_carry, handed_keys(dec)
        parked = self.parked.slots(keys)
        apply_handed(self.rows.cache, self.rows.delta, slots, carry,
                     self.parked.read(parked, "values"),
                     self.parked.read(parked[carry], "delta"))  # fmt: skip
        self.copy_version[slots] = self.parked.version[parked] + self.pending[slots]
        add_at(self.pending, slots[carry], self.parked.updates[parked[carry]])
        self.parked.release(keys)

    def _allocate(self, ids: np.ndarray, workers: np.ndarray, kinds: np.ndarray) -> None:
        """A free slot of its worker for each MISS record."""
        fault, w = _slots.allocate(ids, workers, kinds, _MISS, self.free, self.free_top,
                                   self.slot_of, self.slot_row, self.pending, self._taken)  # fmt: skip
        if fault == 1:
            raise CapacityError(f"worker {w}'s cache of {self.capacity} rows is full")
        if fault == 2:
            raise InvariantViolation(f"worker {w} reused a slot with pending updates")

    def _gather(self, dec: IterationDecisions,
                slots: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        ids, workers = dec.touched_ids, dec.touched_w
        stale, most, first = _slots.read_plan(slots, ids, self.latest, self.copy_version,
                                              self.pos_of_slot)  # fmt: skip
        if stale:
            lag = int(self.latest[ids[first]] - self.copy_version[slots[first]])
            self._stale(stale, most, dec.iteration, int(workers[first]), int(ids[first]), lag)
        self._rows_read, self._slots_read, self._hot_read = ids, slots, None
        inverse = np.empty(dec.batch.ids.shape, np.int64)
        gather_inverse(dec.batch.ids, dec.assign, self.slot_of, self.pos_of_slot, inverse)
        self._inverse = index_tensor(inverse, self.device)
        return self.rows.read(slots), self._inverse

    def _check_fresh(self, ids: np.ndarray, workers: np.ndarray, versions: np.ndarray,
                     iteration: int) -> None:  # fmt: skip
        """Count (strict: refuse) reads of copies that miss updates applied elsewhere."""
        lag = self.latest[ids] - versions
        stale = int(np.count_nonzero(lag))
        if stale:
            first = int(np.flatnonzero(lag)[0])
            self._stale(stale, int(lag.max()), iteration, int(workers[first]), int(ids[first]),
                        int(lag[first]))  # fmt: skip

    def _stale(self, stale: int, most: int, iteration: int, worker: int, row: int,
               lag: int) -> None:  # fmt: skip
        self.tally[Tally.STALE_READS] += stale
        self.max_staleness = max(self.max_staleness, most)
        if self.strict:
            raise InvariantViolation(
                f"iteration {iteration}: {stale} reads of outdated copies, e.g. worker "
                f"{worker} read row {row}, {lag} update(s) behind"
            )

    # ---- FAE's replicated table --------------------------------------------------------------

    def _switch_phase(self, switch: PhaseSwitch) -> None:
        """Load the replicated rows on every worker, or write one replica back."""
        if switch.enter:
            self.hot = ReplicatedTable.load(switch.rows, self.rows, self.ps_version)
        elif self.hot is not None:
            self._leave_hot()
        else:
            raise InvariantViolation("a replicated phase ends that never started")

    def _prepare_hot(self, dec: IterationDecisions) -> tuple[torch.Tensor, torch.Tensor]:
        if self.hot is None:
            raise InvariantViolation(f"iteration {dec.iteration}: a replicated batch outside a "
                                     "replicated phase")
        unique, inverse = self.hot.locate(dec.batch.ids, dec.iteration)
        ids = self.hot.rows[unique]
        no_worker = np.zeros(unique.size, np.int64)
        self._check_fresh(ids, no_worker, self.hot.version[unique], dec.iteration)
        self._hot_read, self._rows_read = unique, ids
        self._inverse = index_tensor(inverse, self.device)
        return self.hot.read(unique), self._inverse

    def _leave_hot(self) -> None:
        """One replica goes back to the PS (|H| pushes, counted by the caller); cached copies of
        H are now outdated, which their versions show."""
        self.hot.store(self.rows, self.ps_version)  # type: ignore[union-attr]
        self.hot = None

