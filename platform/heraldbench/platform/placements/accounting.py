"""One accounting of a placement over a trace: per device and per tier (0: within a host,
1: across hosts), what the forward all-to-all sends, the gradients sent back, the replicas'
gradient all-reduce, the ids sent ahead of the lookups, and the lookups each device serves.

Every iteration is ``devices × batch_size`` consecutive samples; device ``d`` takes samples
``d·m .. (d+1)·m − 1`` of it (TorchRec's local batches). A trailing partial iteration is not
counted. The per-access reference (:mod:`.reference`) is held equal to this by a test.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.placements._kernels import account_chunk, servers_of
from heraldbench.platform.placements.jagged import JaggedIds
from heraldbench.platform.placements.types import Placement

__all__ = ["Traffic", "account", "allreduce_bytes", "serving_devices"]

TIERS = ("intra-host", "inter-host")


@dataclass
class Traffic:
    """Totals over ``iterations`` iterations; arrays of shape (devices,) or (devices, 2 tiers).

    ``forward``/``backward``/``sync``: bytes sent by each device; ``ids_sent``: ids each device
    sent to another; ``lookups``: rows each device read for others and itself;
    ``peak_lookups``: the sum over iterations of the busiest device's lookups.
    """

    iterations: int
    lookups: np.ndarray
    peak_lookups: int
    forward: np.ndarray
    backward: np.ndarray
    sync: np.ndarray
    ids_sent: np.ndarray
    host_memory_reads: np.ndarray

    @property
    def load_balance(self) -> float:
        """Max over mean lookups served, per iteration, summed over iterations (1 is even)."""
        total = float(self.lookups.sum())
        return self.peak_lookups * len(self.lookups) / total if total else 1.0

    def alltoall_bytes_per_tier(self) -> np.ndarray:
        """Bytes of the forward and backward all-to-alls per iteration per tier, all devices
        (the replicas' all-reduce apart): FlexShard's "global all-to-all" is the inter tier."""
        return (self.forward + self.backward).sum(0) / max(self.iterations, 1)

    def bytes_per_tier(self) -> np.ndarray:
        """Bytes sent per iteration per tier by all devices, forward + backward + sync."""
        return (self.forward + self.backward + self.sync).sum(0) / max(self.iterations, 1)


def allreduce_bytes(every_device: float, per_host: np.ndarray, hosts: int,
                    per_host_devices: int) -> np.ndarray:
    """Bytes per device and tier of the replicas' all-reduce (a modelling choice, stated in
    docs/sharding.md): rows on every device all-reduce hierarchically (a ring within each host,
    2(D−1)/D of the bytes on the intra tier, then a ring across hosts over each device's 1/D
    slice, 2(H−1)/H · 1/D on the inter tier); rows on one device per host (local index i)
    all-reduce in a ring across hosts among the devices of index i, 2(H−1)/H inter."""
    devices = hosts * per_host_devices
    out = np.zeros((devices, 2))
    out[:, 0] = every_device * 2 * (per_host_devices - 1) / per_host_devices
    out[:, 1] = every_device * 2 * (hosts - 1) / hosts / per_host_devices
    out[:, 1] += np.tile(np.asarray(per_host, np.float64), hosts) * 2 * (hosts - 1) / hosts
    return out


def serving_devices(placement: Placement, table: int, shard: int, rows: np.ndarray,
                    readers: np.ndarray) -> np.ndarray:
    """The device serving each read of ``rows[i]`` (of ``table``, column shard ``shard``) by a
    sample on device ``readers[i]``: the accounting kernel's rule, for a trainer to carry out."""
    part = placement.tables[table].shards[shard]
    return servers_of(part.scope, part.owner, np.asarray(rows, np.int64),
                      np.asarray(readers, np.int64), placement.topology.devices_per_host)


class _Flat:
    """A placement's column shards concatenated for the kernel."""

    def __init__(self, placement: Placement) -> None:
        shards = [(t, s) for t, part in enumerate(placement.tables) for s in part.shards]
        counts = [len(part.shards) for part in placement.tables]
        self.shard_hi = np.cumsum(counts).astype(np.int64)
        self.shard_lo = self.shard_hi - np.asarray(counts, np.int64)
        rows = [s.scope.shape[0] for _, s in shards]
        self.shard_base = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64)
        self.value_bytes = np.asarray(
            [s.width * placement.tables[t].table.bytes_per_value for t, s in shards], np.float64)
        self.scope = np.concatenate([s.scope for _, s in shards])
        self.owner = np.concatenate([s.owner for _, s in shards])
        self.pooled = np.asarray([part.table.pooled for part in placement.tables], np.bool_)


def account(placement: Placement, batches: Iterable[JaggedIds], batch_size: int) -> Traffic:
    """Count ``placement`` over ``batches`` (each a whole number of iterations but perhaps the
    last) with ``batch_size`` samples per device per iteration."""
    topo = placement.topology
    if batch_size < 1:
        raise SpecError(f"batch_size must be >= 1, got {batch_size}")
    flat = _Flat(placement)
    w, d = topo.devices, topo.devices_per_host
    acc = {name: np.zeros((w, 2)) for name in ("forward", "backward")}
    ids_sent = np.zeros((w, 2), np.int64)
    lookups, reads = np.zeros(w, np.int64), np.zeros(w, np.int64)
    sync_every, sync_per_host = np.zeros(1), np.zeros(d)
    touched = np.full(flat.scope.shape[0], -1, np.int64)
    marker, stamp, iterations, peak = np.zeros(w, np.int64), 0, 0, 0
    for batch in batches:
        whole = batch.samples // (w * batch_size)
        if whole == 0:
            continue
        batch = _first_samples(batch, whole * w * batch_size)
        per_iteration = np.zeros((whole, w), np.int64)
        stamp = account_chunk(
            batch.lengths, batch.values, batch.table_starts(), flat.pooled, flat.shard_lo,
            flat.shard_hi, flat.shard_base, flat.value_bytes, flat.scope, flat.owner, touched,
            iterations, batch_size, w, d, per_iteration, acc["forward"], acc["backward"],
            ids_sent, reads, sync_every, sync_per_host, marker, stamp)
        lookups += per_iteration.sum(0)
        peak += int(per_iteration.max(1).sum())
        iterations += whole
    sync = allreduce_bytes(float(sync_every[0]), sync_per_host, topo.hosts, d)
    return Traffic(iterations, lookups, peak, acc["forward"], acc["backward"], sync, ids_sent,
                   reads)


def _first_samples(batch: JaggedIds, n: int) -> JaggedIds:
    if n == batch.samples:
        return batch
    lengths = batch.lengths[:, :n]
    starts = batch.table_starts()
    keep = [batch.values[starts[t]: starts[t] + int(lengths[t].sum())]
            for t in range(lengths.shape[0])]
    return JaggedIds(np.ascontiguousarray(lengths), np.concatenate(keep))
