"""One rank (device) of a placement's training: forward all-to-all, the DLRM on its samples,
backward all-to-all, the replicas' all-reduce, SGD.

Modelling assumptions (docs/sharding.md, "Training a placement"):

* **Samples.** Device ``d`` takes samples ``d·m … (d+1)·m − 1`` of each iteration of ``W·m``
  (as the accounting does); a trailing partial iteration is dropped, as ``train_plain`` drops it.
* **Forward.** For each (sample, table, column shard) every serving device sends the reader one
  partial sum of the rows it serves (a pooled table) or every id's row (a sequence table); the
  reader adds them into each field's sum and pools the sums by the model's own rule
  (:meth:`~heraldbench.platform.train.model.DLRM.pool_sums`: sum, or the mean of the table's
  ids, a sequence's history included).
* **Backward.** The reader sends each received vector's gradient back to its server, which
  adds it to every row the vector summed; replicated rows' gradients are summed over their
  holders (:mod:`._ring`) before SGD, so replicas stay identical.
* **Dense parameters** are data-parallel: each rank's loss is its samples' summed BCE over the
  global batch size, and one all-reduce sums the gradients (and the loss) over the ranks.
"""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F

from heraldbench.platform.distributed.sharded._comm import Meter
from heraldbench.platform.distributed.sharded._routes import Routes, route, shard_slots
from heraldbench.platform.distributed.sharded._rows import HeldRows
from heraldbench.platform.placements import JaggedIds
from heraldbench.platform.train.model import (
    DLRM,
    batch_lengths,
    init_embedding_table,
    trace_model_config,
)

__all__ = ["PlacementRank", "train_rank"]


class PlacementRank:
    """This rank's model copy, rows and meter (``job``: a :class:`._run.PlacementJob`)."""

    def __init__(self, job, comm) -> None:
        settings, trace = job.settings, job.trace
        self.job, self.comm, self.rank = job, comm, comm.rank
        self.dtype = getattr(torch, job.dtype)
        config = trace_model_config(settings.model, embedding_dim=job.embedding_dim, trace=trace)
        self.model = DLRM(config, seed=settings.torch_seed).to(dtype=self.dtype)
        self.params = list(self.model.parameters())
        self.optimizer = torch.optim.SGD(self.params, lr=settings.lr_dense)
        layout = trace.layout
        self.offsets = np.asarray(layout.offsets, np.int64)
        self.widths = np.asarray(layout.table_widths, np.int64)
        table = init_embedding_table(layout.sizes, job.embedding_dim, settings.torch_seed)
        self.held = HeldRows(job.placement, self.rank, shard_slots(job.placement),
                             table.to(self.dtype), self.offsets)
        self.meter = Meter(comm, job.placement.topology)
        self.ids_sent = np.zeros(2, np.int64)

    def step(self, chunk) -> float:
        """One iteration on the global batch ``chunk``; returns the global batch's mean loss."""
        m, dim = self.job.batch_size, self.job.embedding_dim
        routes = route(self.job.placement, JaggedIds.from_columns(
            chunk.ids, self.offsets, self.widths, chunk.lengths), m)
        self.ids_sent += routes.ids_sent[self.rank]
        served = self.held.serve(routes, dim)
        received = self._forward(routes, served).requires_grad_()
        mine = slice(self.rank * m, (self.rank + 1) * m)
        lengths = None if chunk.lengths is None else chunk.lengths[mine]
        loss = self._loss(routes, received, chunk.dense[mine], chunk.labels[mine], lengths)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grads = self.held.gradients(routes, self._backward(routes, received.grad))
        self.held.sync(self.meter, routes, grads)
        self.held.step(grads, self.job.settings.lr_embedding)
        return self._dense_step(loss.detach())

    def _payload(self, routes: Routes, values: torch.Tensor, server: int, reader: int):
        idx = routes.between(server, reader)
        return values[torch.from_numpy(idx)][torch.from_numpy(
            routes.column_mask(idx, values.shape[1]))]

    def _size(self, routes: Routes, server: int, reader: int) -> int:
        return int(routes.column_mask(routes.between(server, reader),
                                      self.job.embedding_dim).sum())

    def _swap(self, phase: str, routes: Routes, values: torch.Tensor, serving: bool):
        """Send each vector's columns of ``values`` across (server → reader when ``serving``,
        else back); returns the (vectors, D) values this rank got, its own vectors kept."""
        world, me = self.comm.world, self.rank
        pair = (lambda other: (me, other)) if serving else (lambda other: (other, me))
        back = (lambda other: (other, me)) if serving else (lambda other: (me, other))
        sends = [values.new_empty(0) if d == me else self._payload(routes, values, *pair(d))
                 for d in range(world)]
        sizes = [0 if d == me else self._size(routes, *back(d)) for d in range(world)]
        got = self.meter.exchange(phase, sends, sizes)
        out = torch.zeros_like(values)
        own = torch.from_numpy(routes.between(me, me))
        out[own] = values[own]
        for d in range(world):
            if d != me:
                idx = routes.between(*back(d))
                block = torch.zeros(idx.size, values.shape[1], dtype=values.dtype)
                block[torch.from_numpy(routes.column_mask(idx, values.shape[1]))] = got[d]
                out[torch.from_numpy(idx)] = block
        return out

    def _forward(self, routes: Routes, served: torch.Tensor) -> torch.Tensor:
        return self._swap("forward", routes, served, serving=True)

    def _backward(self, routes: Routes, grads: torch.Tensor) -> torch.Tensor:
        return self._swap("backward", routes, grads, serving=False)

    def _loss(self, routes: Routes, received: torch.Tensor, dense, labels,
              lengths) -> torch.Tensor:
        m, fields = self.job.batch_size, len(self.widths)
        mine = np.flatnonzero(routes.reader == self.rank)
        tables = np.asarray([s.table for s in routes.slots], np.int64)[routes.slot[mine]]
        field = torch.from_numpy((routes.sample[mine] - self.rank * m) * fields + tables)
        sums = received.new_zeros(m * fields, received.shape[1])
        sums = sums.index_add(0, field, received[torch.from_numpy(mine)])
        pooled = self.model.pool_sums(sums.view(m, fields, -1), batch_lengths(lengths, "cpu"))
        logits = self.model.forward_pooled(torch.from_numpy(dense).to(self.dtype), pooled)
        target = torch.from_numpy(labels).to(self.dtype)
        total = F.binary_cross_entropy_with_logits(logits, target, reduction="sum")
        return total / (m * self.comm.world)

    def _dense_step(self, loss: torch.Tensor) -> float:
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params]
        flat = self.meter.all_reduce(torch.cat([g.reshape(-1) for g in grads] + [loss.view(1)]))
        at = 0
        for p in self.params:
            p.grad = flat[at: at + p.numel()].view_as(p).clone()
            at += p.numel()
        self.optimizer.step()
        return float(flat[-1])


def train_rank(job, comm, progress=None) -> dict:
    """Train ``job`` as ``comm``'s rank; returns what this rank holds and measured."""
    rank = PlacementRank(job, comm)
    iteration_samples = job.batch_size * comm.world
    losses, started = [], time.perf_counter()
    for chunk in job.trace.chunks(iteration_samples):
        if len(chunk) < iteration_samples or len(losses) == job.settings.max_iterations:
            break
        losses.append(rank.step(chunk))
        if progress is not None:
            progress(len(losses) * iteration_samples, job.trace.num_samples)
    return {
        "rank": comm.rank,
        "seconds": time.perf_counter() - started,
        "losses": losses,
        "held": [(rows, values) for rows, values in zip(rank.held.rows, rank.held.values,
                                                         strict=True)],
        "sent": rank.meter.sent,
        "dense_bytes": rank.meter.dense_bytes,
        "ids_sent": rank.ids_sent,
        "model": rank.model.state_dict() if comm.rank == 0 else None,
    }
