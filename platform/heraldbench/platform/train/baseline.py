"""The same DLRM trained the plain PyTorch way: one embedding table, no cache emulation.

It is synchronous SGD on the same global batches, so it is what every strict scheduler's
trained model must equal (within floating-point tolerance), and the yardstick the benchmark
measures the emulation's overhead against. The table is an ``nn.Embedding`` with sparse
gradients and ``torch.optim.SGD``, the idiomatic fast path on CPU.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from heraldbench.platform.data import SampleChunk, TraceSource
from heraldbench.platform.spec import TrainSpec
from heraldbench.platform.train.loop import evaluate
from heraldbench.platform.train.metrics import Evaluation
from heraldbench.platform.train.model import (
    DLRM,
    batch_lengths,
    init_embedding_table,
    trace_model_config,
)
from heraldbench.platform.train.runtime import Stopwatch, resolve_device, to_device

__all__ = ["PlainOutcome", "train_plain"]


@dataclass
class PlainOutcome:
    """The plain run's model, table, quality and throughput (timing as in ``TrainOutcome``)."""

    model: DLRM
    table: torch.Tensor
    final: Evaluation
    losses: np.ndarray
    iterations: int
    samples_trained: int
    timing: dict[str, float]
    samples_per_second: float


def train_plain(
    trace: TraceSource,
    held_out: SampleChunk,
    *,
    global_batch: int,
    embedding_dim: int,
    settings: TrainSpec,
    dtype: torch.dtype = torch.float32,
    sync_phases: bool = False,
) -> PlainOutcome:
    """Train on ``trace`` in global batches of ``global_batch`` (a trailing partial batch is
    dropped, as the executor drops it) and score on ``held_out``. ``sync_phases`` as for
    :func:`~heraldbench.platform.train.loop.train_scheduler`."""
    device = resolve_device(settings.device)
    config = trace_model_config(settings.model, embedding_dim=embedding_dim, trace=trace)
    model = DLRM(config, seed=settings.torch_seed).to(device, dtype)
    table = init_embedding_table(trace.layout.sizes, embedding_dim, settings.torch_seed).to(dtype)
    embedding = nn.Embedding.from_pretrained(table, freeze=False, sparse=True).to(device)
    dense_opt = torch.optim.SGD(model.parameters(), lr=settings.lr_dense)
    sparse_opt = torch.optim.SGD(embedding.parameters(), lr=settings.lr_embedding)
    watch, losses, samples = Stopwatch(device, sync_phases), [], 0
    start = time.perf_counter()
    for batch in trace.chunks(global_batch):
        if len(batch) < global_batch:
            break
        with watch("input"):
            ids = to_device(batch.ids.astype(np.int64), device)
            dense = to_device(batch.dense, device, dtype)
            labels = to_device(batch.labels, device, dtype)
        with watch("compute"):
            logits = model(dense, embedding(ids), batch_lengths(batch.lengths, device))
            loss = F.binary_cross_entropy_with_logits(logits, labels)
            dense_opt.zero_grad(set_to_none=True)
            sparse_opt.zero_grad(set_to_none=True)
            loss.backward()
            dense_opt.step()
            sparse_opt.step()
        losses.append(loss.detach())
        samples += len(batch)
    watch.drain()
    wall = time.perf_counter() - start
    weights = embedding.weight.detach().to("cpu")
    final = evaluate(model, weights, held_out, len(losses), device)
    timing = {**watch.seconds, "train": wall}
    return PlainOutcome(
        model=model,
        table=weights,
        final=final,
        losses=torch.stack(losses).cpu().numpy() if losses else np.zeros(0),
        iterations=len(losses),
        samples_trained=samples,
        timing=timing,
        samples_per_second=samples / wall if wall > 0 else 0.0,
    )
