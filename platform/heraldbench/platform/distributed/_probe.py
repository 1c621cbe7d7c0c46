"""What each rank of ``heraldbench profile-cluster`` measures, inside a real process group.

Every measurement is timed on every rank and reduced to the mean over ranks; each point is the
mean of ``repeats`` back-to-back calls after two warm-up calls and a barrier. Sizes are
bytes of float32 payload. The sweeps use the collectives the trainer uses
(:mod:`heraldbench.platform.distributed._exchange`, :mod:`heraldbench.platform.distributed._rank`):

* ``send_recv``: rank 0 and a rank on another host ping-pong (rank 1 where every rank shares a
  host); a point is half a round trip (the others wait);
* ``send_recv_intra``: the same between rank 0 and another rank of rank 0's host, where there
  is one (the tier placements' all-to-alls use within a host); hosts are ``options["hosts"]``,
  one label per rank (the shaped launcher's host groups), else each rank's machine name;
* ``all_to_all``: ``all_to_all_single`` with ``size`` bytes to every other rank; a point's size
  is the bytes one rank sends to the others, (W−1)·size, the size the time model charges;
* ``all_reduce``: ``all_reduce`` of ``size`` bytes (sum);
* ``round``, ``iteration_allreduce``, ``iteration_compute``: the trainer's iteration on made-up
  rows (:mod:`._probe_loop`): its pull and push rounds (a point's size is the bytes one rank
  sends to the others), its all-reduce and its compute, each timed inside the loop;
* ``replicated``: the compute a replica adds for rows whose gradients are all-reduced, by rows.
"""

from __future__ import annotations

import platform
from typing import Any

import torch
import torch.distributed as dist

from heraldbench.platform.distributed._probe_loop import (
    loop_sweep,
    mean_over_ranks,
    replicated_sweep,
    timed,
)

__all__ = ["SIZES", "peers_of", "probe"]

#: Bytes per message: 256 B .. 4 MiB (the trainer's rounds move KB to MB per rank).
SIZES = tuple(256 * 4**k for k in range(8))


def _repeats(size: int) -> int:
    return max(5, min(40, (16 << 20) // max(size, 1)))


def _send_recv(size: int, peer: int = 1) -> float:
    rank, buf = dist.get_rank(), torch.zeros(size // 4)

    def ping() -> None:
        if rank == 0:
            dist.send(buf, peer)
            dist.recv(buf, peer)
        elif rank == peer:
            dist.recv(buf, 0)
            dist.send(buf, 0)

    seconds = timed(ping, _repeats(size)) / 2  # one way
    t = torch.tensor([seconds if rank == 0 else 0.0], dtype=torch.float64)
    dist.broadcast(t, 0)
    return float(t.item())


def _all_to_all(size: int) -> float:
    world = dist.get_world_size()
    send, recv = torch.zeros(world * (size // 4)), torch.empty(world * (size // 4))
    return mean_over_ranks(timed(lambda: dist.all_to_all_single(recv, send), _repeats(size)))


def _all_reduce(size: int) -> float:
    buf = torch.zeros(size // 4)
    return mean_over_ranks(timed(lambda: dist.all_reduce(buf), _repeats(size)))


def peers_of(hosts: list[Any]) -> tuple[int, int | None]:
    """Rank 0's peers: (across hosts, else rank 1; within its host, else None)."""
    inter = next((r for r in range(1, len(hosts)) if hosts[r] != hosts[0]), 1)
    intra = next((r for r in range(1, len(hosts)) if hosts[r] == hosts[0]), None)
    return inter, intra


def _hosts(options: dict[str, Any]) -> list[Any]:
    if options.get("hosts") is not None:
        return list(options["hosts"])
    names: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(names, platform.node())
    return names


def probe(options: dict[str, Any]) -> dict[str, Any]:
    """Every sweep (on every rank; the result is the same everywhere)."""
    sizes = [s for s in options.get("sizes", SIZES)]
    sweep: dict[str, list[list[float]]] = {"send_recv": [], "all_to_all": [], "all_reduce": []}
    peers = dist.get_world_size() - 1
    inter, intra = peers_of(_hosts(options))
    for size in sizes:
        sweep["send_recv"].append([size, _send_recv(size, inter)])
        sweep["all_to_all"].append([size * peers, _all_to_all(size)])
        sweep["all_reduce"].append([size, _all_reduce(size)])
    if intra is not None:  # where rank 0's host has two ranks: its inside link too
        sweep["send_recv_intra"] = (sweep["send_recv"] if intra == inter else
                                    [[size, _send_recv(size, intra)] for size in sizes])  # fmt: skip
    loop = loop_sweep(options, options.get("loop_iterations", 20))
    dense_bytes = loop.pop("dense_allreduce_bytes")
    loop["replicated"] = replicated_sweep(options)
    return {"sweep": sweep | loop, "dense_allreduce_bytes": dense_bytes}
