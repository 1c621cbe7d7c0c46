"""What each rank of ``heraldbench profile-cluster`` measures, inside a real process group.

Every measurement is timed on every rank and reduced to the mean over ranks; each point is the
mean of ``repeats`` back-to-back calls after two warm-up calls and a barrier. Sizes are
bytes of float32 payload. The sweeps use the collectives the trainer uses
(:mod:`heraldbench.platform.dist._exchange`, :mod:`heraldbench.platform.dist._rank`):

* ``send_recv``: rank 0 and rank 1 ping-pong; a point is half a round trip (the others wait);
* ``all_to_all``: ``all_to_all_single`` with ``size`` bytes to every other rank; a point's size
  is the bytes one rank sends to the others, (W−1)·size, the size the time model charges;
* ``all_reduce``: ``all_reduce`` of ``size`` bytes (sum);
* ``exchange``: a pull round on the trainer's own path (:func:`_exchange`), by rows per worker;
  a point's size is the bytes one rank sends to the others;
* ``compute``: the trainer's compute of one iteration (:func:`_train_step`) on ``batch_size``
  samples, all ranks at once (as in training, they share the host's cores).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

__all__ = ["SIZES", "probe"]

#: Bytes per message: 256 B .. 4 MiB (the trainer's rounds move KB to MB per rank).
SIZES = tuple(256 * 4**k for k in range(8))
#: Rows per worker of the exchange sweep.
ROWS = (16, 64, 256, 1024, 4096, 16384)


def _timed(op, repeats: int) -> float:
    """Mean seconds of one ``op()`` on this rank, over ``repeats`` calls after 2 warm-ups: the
    mean, not the median, as a training iteration pays every stall of a shared host."""
    for _ in range(2):
        op()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(repeats):
        op()
    return (time.perf_counter() - start) / repeats


def _mean_over_ranks(value: float) -> float:
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t)
    return float(t.item()) / dist.get_world_size()


def _repeats(size: int) -> int:
    return max(5, min(40, (16 << 20) // max(size, 1)))


def _send_recv(size: int) -> float:
    rank, buf = dist.get_rank(), torch.zeros(size // 4)

    def ping() -> None:
        if rank == 0:
            dist.send(buf, 1)
            dist.recv(buf, 1)
        elif rank == 1:
            dist.recv(buf, 0)
            dist.send(buf, 0)

    seconds = _timed(ping, _repeats(size)) / 2  # one way
    t = torch.tensor([seconds if rank == 0 else 0.0], dtype=torch.float64)
    dist.broadcast(t, 0)
    return float(t.item())


def _all_to_all(size: int) -> float:
    world = dist.get_world_size()
    send, recv = torch.zeros(world * (size // 4)), torch.empty(world * (size // 4))
    return _mean_over_ranks(_timed(lambda: dist.all_to_all_single(recv, send), _repeats(size)))


def _all_reduce(size: int) -> float:
    buf = torch.zeros(size // 4)
    return _mean_over_ranks(_timed(lambda: dist.all_reduce(buf), _repeats(size)))


def _exchange(rows_per_worker: int, options: dict[str, Any]) -> tuple[float, float]:
    """(bytes one rank sends to others, seconds) of one pull round on the trainer's own path
    (``RowMover.pull``): the plan, the owners' shard reads, the all_to_all_single, the install
    into the workers' copies. A bare collective misses that per-round and per-row handling."""
    from heraldbench.platform.dist._caches import RowSlots
    from heraldbench.platform.dist._exchange import Exchange
    from heraldbench.platform.dist._shard import PSLayout, PSShard

    rank, world, dim = dist.get_rank(), dist.get_world_size(), options["embedding_dim"]
    dtype, total = _dtype(options), world * max(4 * rows_per_worker, 1024)
    layout = PSLayout(total, list(range(world)))
    shard = PSShard(layout, rank, torch.zeros(total, dim, dtype=dtype), torch.device("cpu"))
    copies = RowSlots(total, rows_per_worker, dim, dtype, torch.device("cpu"))
    exchange = Exchange(rank, world, dim, dtype, torch.device("cpu"))
    rng = np.random.default_rng(7)  # the same records on every rank (the plan is shared)
    ids = np.concatenate([rng.choice(total, rows_per_worker, replace=False) for _ in range(world)])
    readers = np.repeat(np.arange(world), rows_per_worker)
    owners = layout.owner(ids)

    def pull() -> None:
        got = exchange.planned(owners, readers, lambda rec: shard.read(ids[rec]))
        copies.install(ids[got.records], got.values)

    seconds = _mean_over_ranks(_timed(pull, _repeats(rows_per_worker * dim * 4)))
    return float(np.count_nonzero(owners != readers)) / world * exchange.row_bytes, seconds


def _model(options: dict[str, Any]):
    from heraldbench.platform.train.model import DLRM, model_config

    config = model_config(options["model"], embedding_dim=options["embedding_dim"],
                          num_dense=options["num_dense"], num_sparse=options["num_sparse"])  # fmt: skip
    return DLRM(config, seed=0).to(_dtype(options))


def _dtype(options: dict[str, Any]) -> torch.dtype:
    return torch.float64 if options.get("bytes_per_value", 4) == 8 else torch.float32


def _train_step(model, optimizer, copies, dense, labels, ids: np.ndarray, lr: float) -> None:
    """One iteration of the trainer's compute (``RankRun._train`` and ``_apply_rows``): distinct
    rows gathered from the copies, forward, backward, per-row gradients, SGD on the MLPs and the
    embedding update on the copies (the all-reduce is measured apart)."""
    from heraldbench.platform.train._rows import reduce_rows

    unique, inverse = np.unique(ids, return_inverse=True)
    keys = torch.from_numpy(unique)
    rows = copies.index_select(0, keys)
    sparse = F.embedding(torch.from_numpy(inverse.reshape(ids.shape)), rows).requires_grad_()
    loss = F.binary_cross_entropy_with_logits(model(dense, sparse), labels, reduction="sum")
    optimizer.zero_grad(set_to_none=False)
    loss.backward()
    grad = reduce_rows(torch.from_numpy(inverse), sparse.grad.reshape(-1, rows.shape[1]), len(unique))
    optimizer.step()
    copies.index_add_(0, keys, grad, alpha=-lr)


def _compute(options: dict[str, Any], repeats: int) -> tuple[float, int]:
    """(mean seconds per sample over ranks, dense all-reduce bytes of the model)."""
    m, fields, dim = options["batch_size"], options["num_sparse"], options["embedding_dim"]
    dtype, rng = _dtype(options), np.random.default_rng(dist.get_rank())
    model = _model(options)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    rows = max(4 * m * fields, 1024)
    copies = torch.randn(rows, dim, dtype=dtype) * 0.01
    dense = torch.rand(m, options["num_dense"], dtype=dtype)
    labels = torch.randint(0, 2, (m,)).to(dtype)
    # Ids skewed as CTR traces are (many repeats within a batch): rows ~ rows·u³.
    ids = (rows * rng.random((m, fields)) ** 3).astype(np.int64)
    seconds = _timed(lambda: _train_step(model, optimizer, copies, dense, labels, ids, 0.01),
                     repeats)  # fmt: skip
    values = sum(p.numel() for p in model.parameters()) + 1  # + the loss
    return _mean_over_ranks(seconds) / m, values * torch.empty(0, dtype=dtype).element_size()


def probe(options: dict[str, Any]) -> dict[str, Any]:
    """Every sweep (on every rank; the result is the same everywhere)."""
    sizes = [s for s in options.get("sizes", SIZES)]
    sweep: dict[str, list[list[float]]] = {"send_recv": [], "all_to_all": [], "all_reduce": []}
    peers = dist.get_world_size() - 1
    for size in sizes:
        sweep["send_recv"].append([size, _send_recv(size)])
        sweep["all_to_all"].append([size * peers, _all_to_all(size)])
        sweep["all_reduce"].append([size, _all_reduce(size)])
    sweep["exchange"] = [list(_exchange(n, options)) for n in options.get("rows", ROWS)]
    per_sample, dense_bytes = _compute(options, options.get("compute_repeats", 10))
    sweep["compute"] = [[options["batch_size"], per_sample * options["batch_size"]]]
    return {"sweep": sweep, "us_per_sample": per_sample * 1e6, "dense_allreduce_bytes": dense_bytes}
