"""One iteration's routes under a placement: which device serves each id, and the vectors that
cross between devices (docs/sharding.md, "The accounting").

Modelling assumption: every rank reads the whole global batch (as the cache trainer's ranks
replay the whole decision stream), so every rank derives the same routes and only values travel;
the ids a reader would send ahead of the lookups are counted from the routes, not sent.

A *vector* is what a serving device returns to a reader for one (sample, table, column shard):
for a pooled table, the partial sum of the rows it serves there (one per distinct server); for
a sequence table, one id's row. Who serves a read is the accounting's own rule,
:func:`~heraldbench.platform.placements.serving_devices`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from heraldbench.platform.placements import JaggedIds, Placement, serving_devices

__all__ = ["Routes", "ShardSlot", "route"]


@dataclass(frozen=True)
class ShardSlot:
    """Column shard ``shard`` of ``table``: its columns ``[column, column + width)``."""

    table: int
    shard: int
    column: int
    width: int


@dataclass(frozen=True)
class Routes:
    """Vectors sorted by (server, reader), then shard slot, then sample; and the reads in them.

    Attributes:
        slot, sample, reader, server: per vector, its shard slot (index into ``slots``), its
            sample within the iteration, the device reading it and the device serving it.
        occ_slot, occ_row, occ_vector: per read (each id of each column shard), its slot, its row
            within its table, and the vector it goes into.
        ids_sent: (devices, 2) reads each reader sends to another device, per tier.
    """

    slots: tuple[ShardSlot, ...]
    slot: np.ndarray
    sample: np.ndarray
    reader: np.ndarray
    server: np.ndarray
    occ_slot: np.ndarray
    occ_row: np.ndarray
    occ_vector: np.ndarray
    ids_sent: np.ndarray

    def between(self, server: int, reader: int) -> np.ndarray:
        """Indices of the vectors ``server`` sends ``reader``, in the order both use."""
        lo, hi = np.searchsorted(self._pair, [server * self._devices + reader,
                                              server * self._devices + reader + 1])
        return np.arange(lo, hi)

    @property
    def _devices(self) -> int:
        return self.ids_sent.shape[0]

    @property
    def _pair(self) -> np.ndarray:
        return self.server.astype(np.int64) * self._devices + self.reader

    def widths(self) -> np.ndarray:
        return np.asarray([s.width for s in self.slots], np.int64)[self.slot]

    def column_mask(self, vectors: np.ndarray, dim: int) -> np.ndarray:
        """(len(vectors), dim) booleans: the columns each vector carries."""
        cols = np.arange(dim)
        start = np.asarray([s.column for s in self.slots], np.int64)[self.slot[vectors]]
        return (cols >= start[:, None]) & (cols < (start + self.widths()[vectors])[:, None])


def shard_slots(placement: Placement) -> tuple[ShardSlot, ...]:
    return tuple(ShardSlot(t, k, part.column, part.width)
                 for t, table in enumerate(placement.tables)
                 for k, part in enumerate(table.shards))


def route(placement: Placement, batch: JaggedIds, batch_size: int) -> Routes:
    """The routes of one iteration (``batch``: its devices × ``batch_size`` samples)."""
    topo = placement.topology
    w, per_host = topo.devices, topo.devices_per_host
    slots = shard_slots(placement)
    starts = batch.table_starts()
    parts, occ_parts, made = [], [], 0
    sent = np.zeros((w, 2), np.int64)
    for index, slot in enumerate(slots):
        lengths = batch.lengths[slot.table]
        rows = batch.values[starts[slot.table]: starts[slot.table + 1]].astype(np.int64)
        sample = np.repeat(np.arange(batch.samples), lengths)
        reader = sample // batch_size
        server = serving_devices(placement, slot.table, slot.shard, rows, reader)
        remote = server != reader
        np.add.at(sent, (reader[remote], (server[remote] // per_host
                                          != reader[remote] // per_host).astype(np.int64)), 1)
        if placement.tables[slot.table].table.pooled:  # one vector per (sample, server)
            keys, which = np.unique(sample * w + server, return_inverse=True)
            vec_sample, vec_server = keys // w, keys % w
        else:  # a sequence: one vector per id
            which, vec_sample, vec_server = np.arange(rows.size), sample, server
        parts.append((np.full(vec_sample.size, index), vec_sample, vec_sample // batch_size,
                      vec_server))
        occ_parts.append((np.full(rows.size, index), rows, which + made))
        made += vec_sample.size
    slot_of, sample, reader, server = (np.concatenate(a).astype(np.int64) for a in zip(*parts))
    order = np.lexsort((reader, server))  # stable: slot, then sample, within a (server, reader)
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(order.size)
    occ_slot, occ_row, occ_vector = (np.concatenate(a).astype(np.int64) for a in zip(*occ_parts))
    return Routes(slots, slot_of[order], sample[order], reader[order], server[order],
                  occ_slot, occ_row, rank_of[occ_vector], sent)

