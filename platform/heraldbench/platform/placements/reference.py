"""The accounting, access by access, in plain Python: slow and obvious, for the differential
test. It derives everything from :meth:`Placement.holders` (not the kernel's codes): a read is
served by the holder on the reader's device, else the lowest holder on its host, else the
lowest holder; the replicas' all-reduce is :func:`~.accounting.allreduce_bytes` over the rows
touched in the iteration, grouped by their holders."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from heraldbench.platform.placements.accounting import Traffic, allreduce_bytes
from heraldbench.platform.placements.jagged import JaggedIds
from heraldbench.platform.placements.types import Placement, Scope

__all__ = ["account_reference"]


def _serve(holders: tuple[int, ...], req: int, per_host: int) -> int:
    if req in holders:
        return req
    near = [h for h in holders if h // per_host == req // per_host]
    return min(near) if near else min(holders)


def _samples(batches: Iterable[JaggedIds]):
    """(table, ids) lists per sample, in trace order."""
    for batch in batches:
        starts = batch.table_starts()
        at = starts[:-1].copy()
        for j in range(batch.samples):
            row = []
            for t in range(batch.lengths.shape[0]):
                n = int(batch.lengths[t, j])
                row.append([int(v) for v in batch.values[at[t]: at[t] + n]])
                at[t] += n
            yield row


def account_reference(placement: Placement, batches: Iterable[JaggedIds],
                      batch_size: int) -> Traffic:
    topo = placement.topology
    w, d = topo.devices, topo.devices_per_host
    forward, backward = np.zeros((w, 2)), np.zeros((w, 2))
    ids_sent = np.zeros((w, 2), np.int64)
    lookups, reads = np.zeros(w, np.int64), np.zeros(w, np.int64)
    every, per_host = 0.0, np.zeros(d)
    samples = list(_samples(batches))
    iterations = len(samples) // (w * batch_size)
    peak = 0
    for it in range(iterations):
        served = np.zeros(w, np.int64)
        touched: set[tuple[int, int, int]] = set()
        for j in range(w * batch_size):
            req = j // batch_size
            for t, ids in enumerate(samples[it * w * batch_size + j]):
                part = placement.tables[t]
                vector = part.table.bytes_per_value
                for k, shard in enumerate(part.shards):
                    sent_from: set[int] = set()
                    for row in ids:
                        holders = placement.holders(t, row, k)
                        server = _serve(holders, req, d)
                        served[server] += 1
                        scope = Scope(int(shard.scope[row]))
                        if scope is Scope.HOST_MEMORY:
                            reads[server] += 1
                        if len(holders) > 1 and (t, k, row) not in touched:
                            touched.add((t, k, row))
                            if len(holders) == w:
                                every += shard.width * vector
                            else:
                                per_host[holders[0] % d] += shard.width * vector
                        if server == req:
                            continue
                        tier = int(server // d != req // d)
                        ids_sent[req, tier] += 1
                        if part.table.pooled and server in sent_from:
                            continue
                        sent_from.add(server)
                        forward[server, tier] += shard.width * vector
                        backward[req, tier] += shard.width * vector
        lookups += served
        peak += int(served.max())
    sync = allreduce_bytes(every, per_host, topo.hosts, d)
    return Traffic(iterations, lookups, peak, forward, backward, sync, ids_sent, reads)
