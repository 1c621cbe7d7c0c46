"""The trainer's iteration on made-up rows: what a round, the all-reduce and the compute cost
*inside* training, where the time model charges them.

Modelling assumption this measures: in training a collective follows work (shard reads, installs,
the forward and backward), so its peers arrive out of step and its communication threads wake
cold; the same collective called back to back, as the link sweeps call it, runs in lockstep and
costs less. Measured on a 2-vCPU VM (gloo over loopback, 2 ranks): a 2 KiB ``all_to_all_single``
took 0.46–0.52 ms back to back and 0.65–2.0 ms after 0.5–5 ms of work on each rank. The time
model's round latency, all-reduce latency and compute per sample therefore come from this loop
(:func:`heraldbench.platform.distributed.profiling.profile_document`).

Each iteration follows the trainer's order
(:meth:`~heraldbench.platform.distributed._rank.RankRun.step`):
a pull round (values from their owners into this worker's copies), the compute (rows gathered,
forward, backward), one all-reduce of the dense gradients and the loss, the dense and embedding
updates, and a push round (deltas to their owners, added to the shard). Every rank pulls and
pushes ``rows`` distinct rows per round, owned k mod W.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

__all__ = [
    "LOOP_ROWS",
    "REPLICATED_ROWS",
    "loop_rows",
    "loop_sweep",
    "mean_over_ranks",
    "replicated_sweep",
    "timed",
]

#: Rows per worker per round (the trainer's rounds move tens to thousands of rows per worker).
LOOP_ROWS = (64, 512, 4096, 32768)
#: Distinct replicated rows of a global batch (BagPipe's replicated cache, FAE's hot batches).
REPLICATED_ROWS = (1024, 4096, 16384)
#: Phases timed per iteration.
_PHASES = ("pull", "compute", "allreduce", "push")


def loop_sweep(options: dict[str, Any], iterations: int = 20) -> dict[str, Any]:
    """Mean seconds per phase over ``iterations`` (after two warm-ups) at each row count, averaged
    over ranks, and the dense all-reduce payload in bytes.

    Returns ``{"round": [[bytes one rank sends to the others, seconds], ...] (pull and push
    rounds), "iteration_allreduce": [[payload bytes, seconds], ...], "iteration_compute":
    [[batch size, seconds], ...], "dense_allreduce_bytes": int}``.
    """
    step = _ComputeStep(options)
    out: dict[str, Any] = {"round": [], "iteration_allreduce": [], "iteration_compute": []}
    for rows in options.get("loop_rows", loop_rows(options)):
        rounds = _Rounds(options, rows)
        seconds = np.zeros(len(_PHASES))
        for i in range(iterations + 2):
            if i == 2:
                dist.barrier()
                seconds[:] = 0.0
            seconds += _iteration(rounds, step)
        mean = mean_over_ranks(seconds / iterations)
        pull, compute, allreduce, push = mean
        out["round"] += [[rounds.bytes_sent, pull], [rounds.bytes_sent, push]]
        out["iteration_allreduce"].append([step.payload_bytes, allreduce])
        out["iteration_compute"].append([step.batch_size, compute])
    out["dense_allreduce_bytes"] = step.payload_bytes
    return out


def loop_rows(options: dict[str, Any]) -> tuple[int, ...]:
    """The row counts of :data:`LOOP_ROWS` a training can move per worker and round: at most its
    batch's ids (``batch_size × num_sparse``), at least the two smallest (a fit needs two).

    Modelling assumption: the round and the all-reduce after it are priced at the sizes training
    moves. On shaped links a round far larger than training's runs at a lower rate (TCP's
    window against the shaper's queue) and leaves the ranks out of step, which the following
    all-reduce absorbs as waiting; priced there, both over-charged a training's smaller rounds
    (4 ranks as 2 hosts × 2 on 100 Mbit/s: every scheduler modelled 1.4–1.6× its measured time)."""
    cap = options.get("batch_size", 256) * options.get("num_sparse", 26)
    fitting = [rows for rows in LOOP_ROWS if rows <= cap]
    return tuple(LOOP_ROWS[: max(2, len(fitting))])


def _iteration(rounds: _Rounds, step: _ComputeStep) -> np.ndarray:
    """Seconds of this rank's pull, compute, all-reduce and push in one iteration."""
    began = time.perf_counter()
    rounds.pull()
    pulled = time.perf_counter()
    reduce_s = step.run()
    computed = time.perf_counter()
    rounds.push()
    pushed = time.perf_counter()
    return np.array([pulled - began, computed - pulled - reduce_s, reduce_s, pushed - computed])


def timed(op, repeats: int) -> float:
    """Mean seconds of one ``op()`` on this rank, over ``repeats`` calls after 2 warm-ups and a
    barrier: the mean, not the median, as a training iteration pays every stall of a shared host."""
    for _ in range(2):
        op()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(repeats):
        op()
    return (time.perf_counter() - start) / repeats


def mean_over_ranks(values):
    """The mean over ranks of a number (a float back) or of an array (an array back)."""
    t = torch.from_numpy(np.array(values, np.float64, ndmin=1))
    dist.all_reduce(t)
    mean = t.numpy() / dist.get_world_size()
    return float(mean[0]) if np.ndim(values) == 0 else mean


def _dtype(options: dict[str, Any]) -> torch.dtype:
    return torch.float64 if options.get("bytes_per_value", 4) == 8 else torch.float32


class _Rounds:
    """A pull and a push round of ``rows`` rows per worker on the trainer's own path
    (:class:`~heraldbench.platform.distributed._steps.RowMover`): the plan, the owners' shard reads,
    ``all_to_all_single``, the install into the copies; the deltas taken and added to the shard."""

    def __init__(self, options: dict[str, Any], rows: int) -> None:
        from heraldbench.platform.distributed._caches import RowSlots
        from heraldbench.platform.distributed._exchange import Exchange
        from heraldbench.platform.distributed._shard import PSLayout, PSShard

        rank, world, dim = dist.get_rank(), dist.get_world_size(), options["embedding_dim"]
        dtype, total, cpu = _dtype(options), world * max(4 * rows, 1024), torch.device("cpu")
        layout = PSLayout(total, list(range(world)))
        self.shard = PSShard(layout, rank, torch.zeros(total, dim, dtype=dtype), cpu)
        self.copies, self.dim = RowSlots(total, rows, dim, dtype, cpu), dim
        self.exchange = Exchange(rank, world, dim, dtype, cpu)
        rng = np.random.default_rng(7)  # the same records on every rank (the plan is shared)
        self.ids = np.concatenate([rng.choice(total, rows, replace=False) for _ in range(world)])
        self.workers = np.repeat(np.arange(world), rows)
        self.owners = layout.owner(self.ids)
        self.mine = self.ids[self.workers == rank]
        remote = np.count_nonzero(self.owners != self.workers)
        self.bytes_sent = remote / world * self.exchange.row_bytes

    def pull(self) -> None:
        ids, shard = self.ids, self.shard
        got = self.exchange.planned(self.owners, self.workers, lambda rec: shard.read(ids[rec]))
        self.copies.install(ids[got.records], got.values)
        # The embedding update (a delta on every row this worker holds), for the push to carry.
        slots = self.copies.slots(self.mine)
        self.copies.update(slots, self.copies.values.new_ones(len(slots), self.dim), 1e-6)

    def push(self) -> None:
        ids, copies = self.ids, self.copies
        got = self.exchange.planned(self.workers, self.owners,
                                    lambda rec: copies.take_delta(ids[rec]))  # fmt: skip
        self.shard.add(ids[got.records], got.values)


class _ComputeStep:
    """The trainer's compute (``RankRun._train`` and ``_apply_rows``) on ``batch_size`` samples of
    CTR-like skewed ids, with the all-reduce of the dense gradients and the loss inside, timed."""

    def __init__(self, options: dict[str, Any]) -> None:
        from heraldbench.platform.train.model import DLRM, model_config

        self.batch_size, fields = options["batch_size"], options["num_sparse"]
        dim, self.dtype = options["embedding_dim"], _dtype(options)
        config = model_config(options["model"], embedding_dim=dim,
                              num_dense=options["num_dense"], num_sparse=fields)  # fmt: skip
        self.model = DLRM(config, seed=0).to(self.dtype)
        self.params = list(self.model.parameters())
        self.optimizer = torch.optim.SGD(self.params, lr=0.01)
        rows = max(4 * self.batch_size * fields, 1024)
        self.copies = torch.randn(rows, dim, dtype=self.dtype) * 0.01
        rng = np.random.default_rng(dist.get_rank())
        self.dense = torch.rand(self.batch_size, options["num_dense"], dtype=self.dtype)
        self.labels = torch.randint(0, 2, (self.batch_size,)).to(self.dtype)
        # Ids skewed as CTR traces are (many repeats within a batch): rows ~ rows·u³.
        self.ids = (rows * rng.random((self.batch_size, fields)) ** 3).astype(np.int64)
        values = sum(p.numel() for p in self.params) + 1  # + the loss
        self.payload_bytes = values * torch.empty(0, dtype=self.dtype).element_size()

    def run(self) -> float:
        """One iteration's compute; returns the seconds spent in its all-reduce."""
        from heraldbench.platform.train.rows import reduce_rows

        unique, inverse = np.unique(self.ids, return_inverse=True)
        keys = torch.from_numpy(unique)
        rows = self.copies.index_select(0, keys)
        sparse = F.embedding(torch.from_numpy(inverse.reshape(self.ids.shape)), rows)
        sparse.requires_grad_()
        logits = self.model(self.dense, sparse)
        loss = F.binary_cross_entropy_with_logits(logits, self.labels, reduction="sum")
        self.optimizer.zero_grad(set_to_none=False)
        loss.backward()
        grad = reduce_rows(torch.from_numpy(inverse), sparse.grad.reshape(-1, rows.shape[1]),
                           len(unique))  # fmt: skip
        flat = torch.cat([p.grad.reshape(-1) for p in self.params] + [loss.detach().reshape(1)])
        began = time.perf_counter()
        dist.all_reduce(flat)
        reduce_s = time.perf_counter() - began
        offset = 0
        for p in self.params:
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p))
            offset += p.numel()
        self.optimizer.step()
        self.copies.index_add_(0, keys, grad, alpha=-0.01)
        return reduce_s


def replicated_sweep(options: dict[str, Any], repeats: int = 10) -> list[list[float]]:
    """[[distinct replicated rows, seconds], ...]: the compute every replica adds per iteration
    for rows whose gradients are all-reduced (``RankRun._shared_rows``, ``_all_reduce`` and
    ``_apply_rows`` on a replicated cache): the global batch's distinct ids, this worker's
    gradients scattered into the payload, and the update of every row the replica holds. The
    global batch is W × batch_size samples; its ids are drawn over ``rows`` rows."""
    from heraldbench.platform.distributed._caches import RowSlots

    world, dim, dtype = dist.get_world_size(), options["embedding_dim"], _dtype(options)
    ids_per_batch = world * options["batch_size"] * options["num_sparse"]
    rng, cpu = np.random.default_rng(dist.get_rank()), torch.device("cpu")
    points = []
    for rows in options.get("replicated_rows", REPLICATED_ROWS):
        copies = RowSlots(rows, rows, dim, dtype, cpu)
        copies.install(np.arange(rows), torch.zeros(rows, dim, dtype=dtype))
        ids = np.concatenate([np.arange(rows), rng.integers(0, rows, max(ids_per_batch - rows, 0))])
        own = np.unique(ids[::world])

        args = (copies, ids, own, torch.randn(len(own), dim, dtype=dtype))
        seconds = mean_over_ranks(timed(lambda: _replicated_update(*args), repeats))  # noqa: B023
        points.append([rows, float(seconds)])
    return points


def _replicated_update(copies, ids: np.ndarray, own: np.ndarray, grad: torch.Tensor) -> None:
    """The global batch's distinct ids, this worker's gradients scattered into the payload, the
    update of every replicated row the replica holds."""
    shared = np.unique(ids)
    full = grad.new_zeros(len(shared), grad.shape[1])
    full[torch.from_numpy(np.searchsorted(shared, own))] = grad
    held = copies.held(shared)
    copies.update(copies.slots(shared[held]), full[torch.from_numpy(held)], 0.01)
