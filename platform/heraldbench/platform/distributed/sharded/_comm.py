"""How a placement's ranks talk: one all-to-all of planned sizes and a sum all-reduce, either
between threads of one process (the emulation, for tests) or between processes over
``torch.distributed`` (gloo's ``all_to_all_single``, as the cache trainer's exchanges use), and
the bytes each rank sent, per phase and tier.

Bytes are measured as the payload a rank hands over for *another* rank (its own vectors move
nothing), by the tier between the two: 0 within a host, 1 across hosts.
"""

from __future__ import annotations

import threading

import numpy as np
import torch
import torch.distributed as dist

from heraldbench.platform.placements import Topology

__all__ = ["PHASES", "GlooComm", "Meter", "ThreadComm", "ThreadHub"]

#: What the rows' traffic is measured as, per tier (the accounting's ``forward``, ``backward``
#: and ``sync``).
PHASES = ("forward", "backward", "sync")
#: Seconds a thread of the emulation waits for the others before the run fails.
BARRIER_S = 300.0


class ThreadHub:
    """The meeting point of ``world`` emulated ranks (one thread each)."""

    def __init__(self, world: int) -> None:
        self.world = world
        self.box: list[list[torch.Tensor | None]] = [[None] * world for _ in range(world)]
        self.barrier = threading.Barrier(world, timeout=BARRIER_S)

    def abort(self) -> None:
        """A failing rank releases the others (their wait raises)."""
        self.barrier.abort()


class ThreadComm:
    """Rank ``rank`` of a :class:`ThreadHub`: payloads handed over by reference, copied."""

    def __init__(self, hub: ThreadHub, rank: int) -> None:
        self.hub, self.rank, self.world = hub, rank, hub.world

    def all_to_all(self, sends: list[torch.Tensor], recv_sizes: list[int]) -> list[torch.Tensor]:
        hub = self.hub
        for dst, payload in enumerate(sends):
            hub.box[self.rank][dst] = payload
        hub.barrier.wait()
        got = [hub.box[src][self.rank].clone() for src in range(self.world)]  # type: ignore[union-attr]
        hub.barrier.wait()
        for src, payload in enumerate(got):
            assert payload.numel() == recv_sizes[src], "planned sizes differ between ranks"
        return got

    def all_reduce(self, flat: torch.Tensor) -> torch.Tensor:
        """The sum over ranks, added in rank order, the same on every rank."""
        hub = self.hub
        hub.box[self.rank][0] = flat
        hub.barrier.wait()
        total = hub.box[0][0].clone()  # type: ignore[union-attr]
        for src in range(1, self.world):
            total += hub.box[src][0]  # type: ignore[operator]
        hub.barrier.wait()
        return total


class GlooComm:
    """This process's rank of the default process group (one process per rank)."""

    def __init__(self) -> None:
        self.rank, self.world = dist.get_rank(), dist.get_world_size()

    def all_to_all(self, sends: list[torch.Tensor], recv_sizes: list[int]) -> list[torch.Tensor]:
        payload = torch.cat([s.reshape(-1) for s in sends])
        out = payload.new_empty(int(sum(recv_sizes)))
        dist.all_to_all_single(out, payload, recv_sizes, [s.numel() for s in sends])
        return list(out.split(recv_sizes))

    def all_reduce(self, flat: torch.Tensor) -> torch.Tensor:
        out = flat.clone()
        dist.all_reduce(out)
        return out


class Meter:
    """One rank's sent bytes per phase and tier, and its dense all-reduce payload."""

    def __init__(self, comm, topology: Topology) -> None:
        self.comm, self.topology = comm, topology
        self.sent = {phase: np.zeros(2) for phase in PHASES}
        self.dense_bytes = 0

    def exchange(self, phase: str, sends: list[torch.Tensor],
                 recv_sizes: list[int]) -> list[torch.Tensor]:
        """All-to-all of 1-d payloads (``sends[d]`` to rank ``d``), measured under ``phase``."""
        rank, host_of = self.comm.rank, self.topology.host_of
        for dst, payload in enumerate(sends):
            if dst != rank:
                tier = int(host_of(dst) != host_of(rank))
                self.sent[phase][tier] += payload.numel() * payload.element_size()
        return self.comm.all_to_all(sends, recv_sizes)

    def all_reduce(self, flat: torch.Tensor) -> torch.Tensor:
        """The dense parameters' all-reduce (data-parallel; not a placement's traffic)."""
        self.dense_bytes += flat.numel() * flat.element_size()
        return self.comm.all_reduce(flat)
