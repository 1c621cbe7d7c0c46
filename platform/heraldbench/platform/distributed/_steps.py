"""One rank's share of each decision of the stream, carried out as real transfers.

The order of :class:`~heraldbench.platform.contract.IterationDecisions`: phase switch; evict
pushes, then evictions; pulls (prefetches included); the update; the other sends. Every rank
replays the whole stream, so it knows every record; it sends the records it is the source of and
receives those it is the destination of (:class:`Exchange`). Owners of rows are PS ranks
(:class:`PSLayout`); workers are ranks ``0 … W−1``.

Who sends, by decision:

* a pull of row k by worker w: owner(k) → w, the PS value; w installs ``value + delta``;
* an evict / update push (``Send.EVICT/UPDATE``) of k by worker v: v → owner(k), v's delta,
  added to the PS;
* a direct transfer (``Send.DIRECT``) of k by v: nothing moves yet; v parks its copy's value
  and delta. At the row's next reads the stream's hand-overs move it v → reader, worker to
  worker, in the pull exchange: the value for each reader that pulls it, the delta for the
  first, which takes it over;
* BagPipe's write-backs (``Send.EVICT/RELEASE``) and a replicated table's exit: the sending
  replica → owner(k), the row's value, which replaces the PS's (the stream names a replica
  that is current: a no-sync row's one writer, ``contract.SingleWriters``).
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform.contract import (
    IterationDecisions,
    PhaseSwitch,
    Send,
    SingleWriters,
    record_keys,
)
from heraldbench.platform.distributed._caches import HotReplica, RowSlots
from heraldbench.platform.distributed._exchange import Exchange
from heraldbench.platform.distributed._shard import PSShard
from heraldbench.platform.train.parked import ParkedCopies, apply_handed, handed_keys

__all__ = ["RowMover"]


class RowMover:
    """This rank's copies, its PS shard, and the transfers the decisions call for.

    Args:
        rank: this rank; workers: W (ranks below W train).
        shard: the PS rows this rank owns; copies: this worker's cached copies.
        exchange: the transport.
        replicated_cache: BagPipe's logically replicated cache (values written back whole).
    """

    def __init__(self, rank: int, workers: int, shard: PSShard, copies: RowSlots,
                 exchange: Exchange, replicated_cache: bool) -> None:  # fmt: skip
        self.rank, self.workers = rank, workers
        self.shard, self.copies, self.exchange = shard, copies, exchange
        self.replicated_cache = replicated_cache
        self.hot: HotReplica | None = None
        self.parked = ParkedCopies(exchange.dim, exchange.dtype, exchange.device)
        #: whose replica of a row is current (BagPipe's no-sync rows), kept from the stream
        self.writers = SingleWriters(shard.layout.rows) \
            if replicated_cache and rank < workers else None

    # ---- before the update -------------------------------------------------------------------

    def switch_phase(self, switch: PhaseSwitch) -> None:
        """Entering: every worker pulls the replicated rows. Leaving: replica 0 writes them back."""
        rows = np.asarray(switch.rows, np.int64)
        if switch.enter:
            ids = np.tile(rows, self.workers)
            readers = np.repeat(np.arange(self.workers), rows.size)
            got = self._pull_values(ids, readers)
            values = torch.empty(rows.size, self.exchange.dim, dtype=self.exchange.dtype,
                                 device=self.exchange.device)  # fmt: skip
            if got[0].size:
                values[torch.from_numpy(got[0] % rows.size).to(values.device)] = got[1]
            self.hot = HotReplica(rows, values) if self.rank < self.workers else None
            return
        hot = self.hot
        positions = None if hot is None else torch.from_numpy(hot.positions(rows))
        self._push(rows, np.zeros(rows.size, np.int64), whole=True,
                   values_of=lambda rec: hot.values[positions[rec]])  # type: ignore[index,union-attr]
        self.hot = None

    def evict(self, dec: IterationDecisions) -> None:
        """Evict pushes, then this worker's evictions."""
        first = dec.sent_how == Send.EVICT
        self._push(dec.sent_ids[first], dec.sent_w[first], whole=self.replicated_cache)
        self.copies.drop(dec.evicted_ids[dec.evicted_w == self.rank])

    def pull(self, dec: IterationDecisions) -> None:
        """Miss and update pulls, prefetches (BagPipe's loads and replica fills) and hand-overs
        of parked copies, in one exchange."""
        pulled = dec.pulled_from_ps()
        ids = np.concatenate([dec.touched_ids[pulled], dec.prefetch_ids]).astype(np.int64)
        readers = np.concatenate([dec.touched_w[pulled], dec.prefetch_w]).astype(np.int64)
        if not dec.handed_ids.size:
            records, values = self._pull_values(ids, readers)
            if records.size:
                self.copies.install(ids[records], values)
            return
        self._pull_and_hand_over(dec, ids, readers)

    # ---- after the update --------------------------------------------------------------------

    def send_after(self, dec: IterationDecisions) -> None:
        """Update pushes, or BagPipe's releases (then every replica drops the released rows);
        direct transfers park their copies."""
        direct = dec.sent_how == Send.DIRECT
        after = (dec.sent_how != Send.EVICT) & ~direct
        self._push(dec.sent_ids[after], dec.sent_w[after], whole=self.replicated_cache)
        if self.replicated_cache:
            self.copies.drop(dec.sent_ids[dec.sent_how == Send.RELEASE])
        mine = direct & (dec.sent_w == self.rank)
        if mine.any():
            ids = dec.sent_ids[mine].astype(np.int64)
            values = self.copies.read(self.copies.slots(ids))
            self.parked.park(record_keys(ids, dec.sent_w[mine]), values,
                             self.copies.take_delta(ids))  # fmt: skip

    # ---- transfers ---------------------------------------------------------------------------

    def _pull_values(self, ids: np.ndarray, readers: np.ndarray) -> tuple[np.ndarray, torch.Tensor]:
        owners = self.shard.layout.owner(ids)
        got = self.exchange.planned(owners, readers, lambda rec: self.shard.read(ids[rec]))
        return got.records, got.values

    def _pull_and_hand_over(self, dec: IterationDecisions, ids: np.ndarray,
                            readers: np.ndarray) -> None:  # fmt: skip
        """One exchange, records in this order: PS values (owner → reader), then each
        hand-over's value, then the carried deltas (sender → reader)."""
        carry = np.flatnonzero(dec.handed_carry)
        handed = dec.handed_ids.size
        src = np.concatenate([self.shard.layout.owner(ids), dec.handed_from, dec.handed_from[carry]])
        dst = np.concatenate([readers, dec.handed_to, dec.handed_to[carry]])
        pulls = ids.size
        keys = handed_keys(dec)
        parked_of = np.concatenate([np.arange(handed), carry])  # hand-over of each parked record

        def values_of(rec: np.ndarray) -> torch.Tensor:
            out = self.exchange.empty(rec.size)
            ps, parked = rec < pulls, rec >= pulls
            if ps.any():
                out[torch.from_numpy(np.flatnonzero(ps))] = self.shard.read(ids[rec[ps]])
            slots = self.parked.slots(keys[parked_of[rec[parked] - pulls]])
            is_value = torch.from_numpy(rec[parked] < pulls + handed).to(out.device)
            rows = torch.where(is_value[:, None], self.parked.read(slots, "values"),
                               self.parked.read(slots, "delta"))  # fmt: skip
            out[torch.from_numpy(np.flatnonzero(parked))] = rows
            return out

        got = self.exchange.planned(src, dst, values_of)
        at = np.empty(src.size, np.int64)
        at[got.records] = np.arange(got.records.size)  # where each record I received lies
        from_ps = got.records[got.records < pulls]
        if from_ps.size:
            self.copies.install(ids[from_ps], got.values[torch.from_numpy(at[from_ps])])
        mine = np.flatnonzero(dec.handed_to == self.rank)
        if mine.size:
            self._take_handed(dec, mine, at[pulls + mine], at, pulls + handed, got.values)
        self.parked.release(keys[dec.handed_from == self.rank])

    def _take_handed(self, dec: IterationDecisions, mine: np.ndarray, value_at: np.ndarray,
                     at: np.ndarray, deltas_start: int, received: torch.Tensor) -> None:  # fmt: skip
        """This reader's hand-overs (``mine``, in record order): allocate the rows it misses,
        install the values (``value_at``: where each lies in ``received``), take the carried
        deltas over."""
        carry = dec.handed_carry
        delta_record = np.full(carry.size, -1, np.int64)
        delta_record[carry] = deltas_start + np.arange(int(carry.sum()))
        ids = dec.handed_ids[mine].astype(np.int64)
        self.copies.allocate_missing(ids)
        slots = self.copies.slots(ids)
        mc = carry[mine]
        apply_handed(self.copies.values, self.copies.delta, slots, mc,
                     received[torch.from_numpy(value_at)],
                     received[torch.from_numpy(at[delta_record[mine][mc]])])  # fmt: skip
        self.copies.mark_dirty(slots[mc])

    def _push(self, ids: np.ndarray, senders: np.ndarray, whole: bool, values_of=None) -> None:
        ids = np.asarray(ids, np.int64)
        if values_of is None:
            take = self.copies.take_values if whole else self.copies.take_delta
            values_of = lambda rec: take(ids[rec])
        owners = self.shard.layout.owner(ids)
        got = self.exchange.planned(np.asarray(senders, np.int64), owners, values_of)
        (self.shard.assign if whole else self.shard.add)(ids[got.records], got.values)

    # ---- the end of a run, and the table as of now -------------------------------------------

    def outgoing(self) -> tuple[tuple[np.ndarray, torch.Tensor], tuple[np.ndarray, torch.Tensor]]:
        """What a flush sends from this rank: (ids, deltas) to add and (ids, values) to assign
        (a replica's dirty row by the worker whose replica is current, a replicated table by
        replica 0)."""
        ids, slots = self.copies.pending()
        if self.writers is not None:
            current = self.writers.writers(ids) == self.rank
            ids, slots = ids[current], slots[current]
        index = torch.from_numpy(slots).to(self.copies.device)
        empty = (np.zeros(0, np.int64), self.copies.values[:0])
        if self.replicated_cache:
            adds = empty
            assigns = (ids, self.copies.values.index_select(0, index))
        else:
            adds, assigns = (ids, self.copies.delta.index_select(0, index)), empty
        if self.hot is not None and self.rank == 0:
            assigns = (np.concatenate([assigns[0], self.hot.rows]),
                       torch.cat([assigns[1], self.hot.values]))  # fmt: skip
        keys, parked = self.parked.remaining()
        if keys.size:  # parked for good: their deltas go with the flush
            adds = (np.concatenate([adds[0], keys >> 8]),
                    torch.cat([adds[1], self.parked.read(parked, "delta")]))  # fmt: skip
        return adds, assigns

    def deliver(self, target: torch.Tensor, adds, assigns) -> None:
        """Send a flush's rows to their owners and apply them to ``target`` (this rank's shard
        values, or a copy of them)."""
        layout, local = self.shard.layout, self.shard
        for (ids, values), whole in ((adds, False), (assigns, True)):
            got_ids, got = self.exchange.unplanned(layout.owner(ids), ids, values)
            index = local.local_index(got_ids)
            if whole:
                target.index_copy_(0, index, got)
            else:
                target.index_add_(0, index, got)
