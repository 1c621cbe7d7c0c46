"""One rank of a distributed training: the model, the rows, and the loop over the stream.

Modelling assumptions (as the emulated trainer, :mod:`heraldbench.platform.train.loop`):

* **Data parallelism.** Worker w trains the samples the scheduler assigned it, on its own copies;
  its loss is its samples' summed BCE over the global batch size, so the all-reduced sum of the
  workers' dense gradients is the gradient of the global batch's mean loss.
* **Embeddings** are updated by plain SGD on the copies read (FAE's replicated rows and
  BagPipe's synced rows with the all-reduced gradient of the whole global batch, BagPipe's
  no-sync rows on their one reader alone); the PS receives deltas, so the trained model equals
  the emulated one up to the order of float additions.
* **Evaluation** runs on rank 0 with the table gathered from the PS shards after a flush
  (interval evaluations: with every pending delta applied to a copy of the shards).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

from heraldbench.platform.contract import IterationDecisions
from heraldbench.platform.counters import TALLY, tally_of
from heraldbench.platform.distributed._caches import RowSlots
from heraldbench.platform.distributed._clock import PHASES, RankClock, split_waiting
from heraldbench.platform.distributed._exchange import Exchange
from heraldbench.platform.distributed._shard import PSLayout, PSShard
from heraldbench.platform.distributed._steps import RowMover
from heraldbench.platform.exceptions import InvariantViolation
from heraldbench.platform.train.loop import evaluate
from heraldbench.platform.train.metrics import Evaluation
from heraldbench.platform.train.model import (
    DLRM,
    batch_lengths,
    init_embedding_table,
    trace_model_config,
)
from heraldbench.platform.train.rows import reduce_rows

__all__ = ["RankRun", "RankSetup"]


class RankSetup:
    """Where this rank sits: rank, world, workers, PS ranks, device, the workers' group."""

    def __init__(self, rank: int, world: int, workers: int, device: torch.device) -> None:
        self.rank, self.world, self.workers, self.device = rank, world, workers, device
        ps = list(range(workers)) if world == workers else list(range(workers, world))
        self.ps_ranks = ps
        self.worker_group = None if world == workers else dist.new_group(list(range(workers)))

    @property
    def trains(self) -> bool:
        return self.rank < self.workers


class RankRun:
    """One scheduler's training on this rank."""

    def __init__(self, setup: RankSetup, trace, held_out, scheduler, replicated_cache: bool,
                 cache_rows: int, embedding_dim: int, settings, dtype: torch.dtype) -> None:  # fmt: skip
        self.setup, self.trace, self.held_out = setup, trace, held_out
        self.settings, self.dtype, self.device = settings, dtype, setup.device
        self.global_batch = scheduler.global_batch
        config = trace_model_config(settings.model, embedding_dim=embedding_dim, trace=trace)
        self.model = DLRM(config, seed=settings.torch_seed).to(self.device, dtype)
        self.params = list(self.model.parameters())
        self.optimizer = torch.optim.SGD(self.params, lr=settings.lr_dense)
        table = init_embedding_table(trace.layout.sizes, embedding_dim, settings.torch_seed)
        rows = table.shape[0]
        layout = PSLayout(rows, setup.ps_ranks)
        shard = PSShard(layout, setup.rank, table.to(dtype), self.device)
        del table
        capacity = min(cache_rows, rows) if setup.trains else 0
        copies = RowSlots(rows, capacity, embedding_dim, dtype, self.device,
                          growable=replicated_cache)  # fmt: skip
        self.exchange = Exchange(setup.rank, setup.world, embedding_dim, dtype, self.device)
        self.mover = RowMover(setup.rank, setup.workers, shard, copies, self.exchange,
                              replicated_cache)  # fmt: skip
        self.replicated_cache = replicated_cache
        self.clock = RankClock(self.device)
        self.tallies: list[np.ndarray] = []
        self.losses: list[float] = []
        self.evaluations: list[Evaluation] = []
        self.lr = settings.lr_embedding
        self.allreduce_bytes = 0  # payload handed to the all-reduce, summed over iterations
        self.handed_delta_rows = 0  # parked deltas handed over (the stream's hand-overs)
        self.cpu_s = 0.0  # CPU seconds of this process while it trained (the driver sets it)
        self.gathered_final: torch.Tensor | None = None
        self.schedule_mode = "inline"  # or "ahead": the stream replayed before training

    # ---- the loop ----------------------------------------------------------------------------

    def step(self, dec: IterationDecisions) -> None:
        clock, mover = self.clock, self.mover
        self.tallies.append(tally_of(dec, self.setup.workers))
        self.handed_delta_rows += int(np.count_nonzero(dec.handed_carry))
        with clock("pull"):
            if dec.phase is not None:
                mover.switch_phase(dec.phase)
        if not dec.replicated:
            with clock("push"):
                mover.evict(dec)
            with clock("pull"):
                mover.pull(dec)
        rows_grad = self._train(dec) if self.setup.trains else None
        self._apply_rows(dec, rows_grad)
        with clock("push"):
            mover.send_after(dec)
        if mover.writers is not None:
            mover.writers.step(dec)

    def _train(self, dec: IterationDecisions):
        """Forward and backward on this worker's samples; returns (rows, gradient) to apply."""
        with self.clock("compute"):
            mine = np.flatnonzero(dec.assign == self.setup.rank)
            batch = dec.batch
            unique, inverse, rows = self._gather(dec, batch.ids[mine])
            dense = torch.from_numpy(batch.dense[mine]).to(self.device, self.dtype)
            labels = torch.from_numpy(batch.labels[mine]).to(self.device, self.dtype)
            sparse = F.embedding(inverse, rows).requires_grad_()
            lengths = None if batch.lengths is None else batch.lengths[mine]
            logits = self.model(dense, sparse, batch_lengths(lengths, self.device))
            loss = F.binary_cross_entropy_with_logits(logits, labels, reduction="sum")
            loss = loss / self.global_batch
            self.optimizer.zero_grad(set_to_none=False)
            loss.backward()
            grad = reduce_rows(inverse, sparse.grad.reshape(-1, rows.shape[1]), len(unique))
        return self._all_reduce(dec, loss, unique, grad)

    def _gather(self, dec, ids: np.ndarray):
        """(keys, inverse, rows): the distinct rows this worker reads, as keys of its copies
        (slots), of the replicated table (positions) or of the replica (global ids)."""
        mover = self.mover
        if dec.replicated:
            keys, inverse = np.unique(mover.hot.positions(ids), return_inverse=True)
            rows = mover.hot.values.index_select(0, _tensor(keys, self.device))
        elif self.replicated_cache:
            keys, inverse = np.unique(ids, return_inverse=True)
            rows = mover.copies.read(mover.copies.slots(keys))
        else:
            keys, inverse = np.unique(mover.copies.slots(ids), return_inverse=True)
            rows = mover.copies.read(keys)
        return keys, _tensor(inverse.reshape(ids.shape), self.device), rows

    def _all_reduce(self, dec, loss, keys, grad):
        """One all-reduce: dense gradients, the loss, and (replicated rows) row gradients over
        the global batch's rows whose gradients are synced. Returns the rows' gradients to
        apply: the all-reduced ones, and (BagPipe) this worker's no-sync rows' own."""
        shared = self._shared_rows(dec)
        parts = [p.grad.reshape(-1) for p in self.params] + [loss.detach().reshape(1)]
        local = None
        if shared is not None:
            synced = np.isin(keys, shared)
            if not synced.all():  # read once in the batch, by this worker alone: not synced
                if not np.isin(keys[~synced], dec.no_sync_ids).all():
                    raise InvariantViolation(f"iteration {dec.iteration}: a row read is in none "
                                             "of the stream's sync classes")
                alone = _tensor(np.flatnonzero(~synced), self.device)
                local = (keys[~synced], grad.index_select(0, alone))
            full = torch.zeros(len(shared), grad.shape[1], dtype=grad.dtype, device=grad.device)
            at = np.searchsorted(shared, keys[synced])
            full[_tensor(at, self.device)] = grad[_tensor(np.flatnonzero(synced), self.device)]
            parts.append(full.reshape(-1))
        flat = torch.cat(parts)
        self.allreduce_bytes += flat.numel() * flat.element_size()
        with self.clock("allreduce"):
            if self.setup.workers > 1:
                dist.all_reduce(flat, group=self.setup.worker_group)
        with self.clock("compute"):
            offset = 0
            for p in self.params:
                p.grad.copy_(flat[offset : offset + p.numel()].view_as(p))
                offset += p.numel()
            self.losses.append(float(flat[offset]))
            self.optimizer.step()
        if shared is None:
            return [(keys, grad)]
        return [(shared, flat[offset + 1 :].view(len(shared), -1))] + ([local] if local else [])

    def _shared_rows(self, dec) -> np.ndarray | None:
        """The global batch's distinct rows whose gradients are all-reduced, as sorted keys: a
        replicated table's rows read, or BagPipe's sync-now and sync-later rows (the stream's;
        a row read once in the batch and not again in the window is not synced); None for
        per-worker caches."""
        if dec.replicated:
            return np.unique(self.mover.hot.positions(dec.batch.ids))
        if self.replicated_cache:
            return np.union1d(dec.sync_now_ids, dec.sync_later_ids).astype(np.int64)
        return None

    def _apply_rows(self, dec, rows_grad) -> None:
        """The embedding update on this worker's copies."""
        if rows_grad is None:
            return
        with self.clock("compute"):
            for keys, grad in rows_grad:
                self._apply(dec, keys, grad)

    def _apply(self, dec, keys: np.ndarray, grad: torch.Tensor) -> None:
        mover = self.mover
        if dec.replicated:
            mover.hot.values.index_add_(0, _tensor(keys, self.device), grad, alpha=-self.lr)
        elif self.replicated_cache:
            held = mover.copies.held(keys)
            mover.copies.update(mover.copies.slots(keys[held]), grad[_tensor(
                np.flatnonzero(held), self.device)], self.lr)  # fmt: skip
        else:
            mover.copies.update(keys, grad, self.lr)

    # ---- the end -----------------------------------------------------------------------------

    def flush(self) -> int:
        """Every pending delta and replicated row to its owner; returns the rows sent."""
        adds, assigns = self.mover.outgoing()
        sent = torch.tensor([len(adds[0]) + len(assigns[0])], dtype=torch.int64, device=self.device)
        self.mover.deliver(self.mover.shard.values, adds, assigns)
        if self.setup.world > 1:
            dist.all_reduce(sent)
        return int(sent.item())

    def gathered_table(self, pending: bool) -> torch.Tensor | None:
        """The whole table on rank 0 (None elsewhere): the PS shards, with every pending delta
        and replicated row applied to a copy of them when ``pending``."""
        shard = self.mover.shard
        values = shard.values
        if pending:
            values = values.clone()
            self.mover.deliver(values, *self.mover.outgoing())
        layout = shard.layout
        size = -(-layout.rows // layout.count)
        padded = torch.zeros(size, values.shape[1], dtype=values.dtype, device=self.device)
        padded[: len(values)] = values
        gathered = [torch.empty_like(padded) for _ in range(self.setup.world)]
        if self.setup.world > 1:
            dist.gather(padded, gathered if self.setup.rank == 0 else None, dst=0)
        else:
            gathered = [padded]
        if self.setup.rank != 0:
            return None
        table = torch.empty(layout.rows, values.shape[1], dtype=values.dtype)
        for s, rank in enumerate(layout.ranks):
            ids = layout.shard_rows(s)
            table[torch.from_numpy(ids)] = gathered[rank][: ids.size].cpu()
        return table

    def evaluate(self, pending: bool) -> None:
        """Rank 0 scores the held-out samples; every rank waits for it (not timed as waiting)."""
        counters = vars(self.exchange).copy()
        table = self.gathered_table(pending)
        if pending:  # a look at the model, not a transfer of the run
            vars(self.exchange).update(counters)
        else:
            self.gathered_final = table
        if table is not None:
            self.evaluations.append(evaluate(self.model, table.to(self.device), self.held_out,
                                             len(self.tallies), self.device))  # fmt: skip
        if self.setup.world > 1:
            dist.barrier()

    def phase_table(self) -> np.ndarray:
        """(iterations, phases) seconds with waiting split out (a collective: every rank)."""
        table = self.clock.table()
        compute = torch.from_numpy(np.ascontiguousarray(table[:, PHASES.index("compute")]))
        compute = compute.to(self.device)
        workers = self.setup.workers
        if workers > 1 and self.setup.trains:
            every = [torch.empty_like(compute) for _ in range(workers)]
            dist.all_gather(every, compute, group=self.setup.worker_group)
            return split_waiting(table, torch.stack(every).cpu().numpy())
        return table

    def tally_table(self) -> np.ndarray:
        return np.array(self.tallies).reshape(len(self.tallies), len(TALLY))


def _tensor(values: np.ndarray, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.int64)).to(device)

