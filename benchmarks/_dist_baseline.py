"""The no-cache baseline of ``bench_distributed.py``: plain PyTorch data-parallel DLRM training on
``torch.distributed`` whose embedding rows live in the same sharded PS as the distributed
trainer's (row k on rank k mod W, initialised by the same ``init_embedding_table``) and are
fetched from and written back to it every iteration, with no cache (the baseline the papers
compare against).

One iteration on rank r (the global batch's samples ``r·B … (r+1)·B − 1`` are its own):

1. **pull**: one ``all_to_all_single`` of row values: every owner sends each worker the distinct
   rows that worker's samples read (every rank reads the whole global batch, so the request is
   known to the owners without a request round, as the trainer's planned exchanges);
2. **compute**: forward and backward of the DLRM (the trainer's preset and seed) on its samples,
   the rows as a leaf tensor (their gradient summed per distinct row by autograd);
3. **all-reduce**: one ``all_reduce`` of the dense gradients and the loss, then SGD;
4. **push**: one ``all_to_all_single`` of the rows' SGD deltas (``−lr·g``) to their owners, which
   add them.

Must be called on every rank of an initialised process group of W ranks.
"""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

__all__ = ["PHASES", "train_baseline"]

PHASES = ("pull", "compute", "allreduce", "push")


def train_baseline(trace, *, rank: int, world: int, batch_size: int, embedding_dim: int,
                   settings, dtype: torch.dtype = torch.float32) -> dict:  # fmt: skip
    """Train one pass over ``trace`` in global batches of ``world × batch_size`` (a last partial
    batch is dropped, as the trainer does); returns samples/s, seconds per phase, CPU seconds
    (all ranks), the series of rows moved (for the time model) and the mean loss of the last
    iterations."""
    from heraldbench.platform.train.model import DLRM, init_embedding_table, model_config

    device = torch.device("cpu")
    config = model_config(settings.model, embedding_dim=embedding_dim, num_dense=trace.num_dense,
                          num_sparse=trace.layout.num_tables)  # fmt: skip
    model = DLRM(config, seed=settings.torch_seed).to(device, dtype)
    params = list(model.parameters())
    optimizer = torch.optim.SGD(params, lr=settings.lr_dense)
    table = init_embedding_table(trace.layout.sizes, embedding_dim, settings.torch_seed)
    total_rows = table.shape[0]
    shard = table[rank::world].to(dtype).contiguous()  # row k at local k // world
    del table
    lr = settings.lr_embedding
    global_batch = world * batch_size
    worker_of = np.repeat(np.arange(world, dtype=np.int64), batch_size)[:, None]
    seconds = dict.fromkeys(PHASES, 0.0)
    pulled, losses = [], []
    samples = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    for chunk in trace.chunks(global_batch):
        if len(chunk) < global_batch:
            break
        began = time.perf_counter()
        ids = chunk.ids.astype(np.int64)
        # The plan every rank knows: distinct (worker, row) pairs, sorted by worker then row.
        pairs = np.unique(worker_of * total_rows + ids)
        pair_w, pair_k = pairs // total_rows, pairs % total_rows
        owner = pair_k % world
        # As owner: the rows each worker reads that this rank holds, grouped by worker.
        serve = owner == rank
        send_counts = np.bincount(pair_w[serve], minlength=world)
        served = pair_k[serve]
        # As reader: its distinct rows (sorted), received grouped by owner.
        mine = slice(*np.searchsorted(pair_w, [rank, rank + 1]))
        keys = pair_k[mine]
        by_owner = np.argsort(keys % world, kind="stable")
        recv_counts = np.bincount(keys % world, minlength=world)
        payload = shard.index_select(0, torch.from_numpy(served // world))
        received = torch.empty(len(keys), embedding_dim, dtype=dtype)
        dist.all_to_all_single(received, payload, recv_counts.tolist(), send_counts.tolist())
        rows = torch.empty_like(received)
        rows[torch.from_numpy(by_owner)] = received
        now = time.perf_counter()
        seconds["pull"] += now - began

        began = now
        own = chunk.slice(rank * batch_size, (rank + 1) * batch_size)
        inverse = torch.from_numpy(np.searchsorted(keys, own.ids.astype(np.int64)))
        dense = torch.from_numpy(own.dense).to(dtype)
        labels = torch.from_numpy(own.labels).to(dtype)
        rows.requires_grad_()
        logits = model(dense, F.embedding(inverse, rows))
        loss = F.binary_cross_entropy_with_logits(logits, labels, reduction="sum") / global_batch
        optimizer.zero_grad(set_to_none=False)
        loss.backward()
        flat = torch.cat([p.grad.reshape(-1) for p in params] + [loss.detach().reshape(1)])
        now = time.perf_counter()
        seconds["compute"] += now - began

        began = now
        dist.all_reduce(flat)
        now = time.perf_counter()
        seconds["allreduce"] += now - began

        began = now
        offset = 0
        for p in params:
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p))
            offset += p.numel()
        losses.append(float(flat[offset]))
        optimizer.step()
        deltas = (rows.grad * -lr)[torch.from_numpy(by_owner)]
        now = time.perf_counter()
        seconds["compute"] += now - began

        began = now
        got = torch.empty(len(served), embedding_dim, dtype=dtype)
        dist.all_to_all_single(got, deltas, send_counts.tolist(), recv_counts.tolist())
        shard.index_add_(0, torch.from_numpy(served // world), got)
        now = time.perf_counter()
        seconds["push"] += now - began
        pulled.append(len(pairs))
        samples += global_batch
    trained = time.perf_counter() - start
    cpu = torch.tensor([time.process_time() - cpu_start], dtype=torch.float64)
    dist.all_reduce(cpu)  # summed over ranks
    pulled_rows = np.asarray(pulled, np.float64)
    return {
        "samples": samples,
        "iterations": len(pulled),
        "train_s": trained,
        "samples_per_second": samples / trained if trained > 0 else 0.0,
        "seconds": seconds,
        "cpu_s": float(cpu),
        # Cluster totals per iteration, as the time model reads them: every distinct row a
        # worker reads is pulled, and pushed back, each iteration.
        "series": {"miss_pull": pulled_rows, "update_push": pulled_rows.copy()},
        "loss": float(np.mean(losses[-10:])) if losses else float("nan"),
    }
