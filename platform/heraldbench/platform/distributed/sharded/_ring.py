"""The replicas' gradient all-reduce, as the accounting models it
(:func:`heraldbench.platform.placements.accounting.allreduce_bytes`), carried out step by step
over the placement ranks' all-to-all so that its bytes are measured, not modelled:

* rows on every device: a ring reduce-scatter within each host, a ring all-reduce across hosts
  of each device's slice (the devices of one local index), a ring all-gather within each host;
* rows on every host (local index ``i``): a ring all-reduce across hosts among the devices of
  index ``i``.

A ring of ``n`` splits the payload into ``n`` chunks (sizes differing by at most one value) and
sends ``n − 1`` of them each way, so the bytes summed over a ring's devices are exactly the
model's (a device's own share differs from the model's even split by at most one value a step).
Every reduced chunk is computed on one device and copied to the others: replicas stay
bitwise identical.
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform.placements import Topology

__all__ = ["cross_host_allreduce", "hierarchical_allreduce"]


def _bounds(size: int, parts: int) -> np.ndarray:
    return np.concatenate([[0], np.cumsum([len(p) for p in np.array_split(np.arange(size),
                                                                           parts)])])


def _step(meter, x: torch.Tensor, ring: list[int], bounds: np.ndarray, send: int, receive: int,
          add: bool) -> None:
    """One ring step: chunk ``send`` to the next device, chunk ``receive`` from the previous."""
    rank, n = meter.comm.rank, len(ring)
    here = ring.index(rank)
    nxt, prev = ring[(here + 1) % n], ring[(here - 1) % n]
    sends = [x.new_empty(0)] * meter.comm.world
    sends[nxt] = x[bounds[send]: bounds[send + 1]]
    sizes = [0] * meter.comm.world
    sizes[prev] = int(bounds[receive + 1] - bounds[receive])
    got = meter.exchange("sync", sends, sizes)[prev]
    part = x[bounds[receive]: bounds[receive + 1]]
    if add:
        part += got
    else:
        part.copy_(got)


def _reduce_scatter(meter, x, ring, bounds) -> int:
    """In place; returns the chunk this device ends holding reduced."""
    n, here = len(ring), ring.index(meter.comm.rank)
    for s in range(n - 1):
        _step(meter, x, ring, bounds, (here - s) % n, (here - 1 - s) % n, add=True)
    return (here + 1) % n


def _all_gather(meter, x, ring, bounds) -> None:
    n, here = len(ring), ring.index(meter.comm.rank)
    for s in range(n - 1):
        _step(meter, x, ring, bounds, (here + 1 - s) % n, (here - s) % n, add=False)


def ring_allreduce(meter, flat: torch.Tensor, ring: list[int]) -> torch.Tensor:
    """The sum of ``flat`` over ``ring``'s devices (this rank among them); every rank calls it
    at once, each with its own ring, all rings of one length."""
    x = flat.clone()
    bounds = _bounds(x.numel(), len(ring))
    _reduce_scatter(meter, x, ring, bounds)
    _all_gather(meter, x, ring, bounds)
    return x


def _rings(topology: Topology, rank: int) -> tuple[list[int], list[int]]:
    """This rank's host ring and cross-host ring (the devices of its local index)."""
    d = topology.devices_per_host
    host, local = divmod(rank, d)
    return ([host * d + i for i in range(d)], [h * d + local for h in range(topology.hosts)])


def cross_host_allreduce(meter, flat: torch.Tensor, topology: Topology) -> torch.Tensor:
    """Rows on every host: summed across hosts among the devices of this rank's local index."""
    return ring_allreduce(meter, flat, _rings(topology, meter.comm.rank)[1])


def hierarchical_allreduce(meter, flat: torch.Tensor, topology: Topology) -> torch.Tensor:
    """Rows on every device: within each host, across hosts per slice, within each host."""
    host_ring, cross_ring = _rings(topology, meter.comm.rank)
    x = flat.clone()
    bounds = _bounds(x.numel(), len(host_ring))
    mine = _reduce_scatter(meter, x, host_ring, bounds)
    lo, hi = bounds[mine], bounds[mine + 1]
    x[lo:hi] = ring_allreduce(meter, x[lo:hi], cross_ring)
    _all_gather(meter, x, host_ring, bounds)
    return x
