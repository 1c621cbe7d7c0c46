"""Tiny traces and runs shared by the trainer's tests (small preset, a few dozen iterations)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from heraldbench.platform.data import InMemoryTrace, SampleChunk
from heraldbench.platform.schedulers import create
from heraldbench.platform.spec import TrainSpec
from heraldbench.platform.train import TrainOutcome, split_trace, train_scheduler

WORKERS, BATCH, CACHE_ROWS, DIM = 4, 8, 40, 4
SIZES = (40, 30, 20, 8)
SETTINGS = TrainSpec(model="small", device="cpu", eval_fraction=0.25, lr_embedding=0.5)


def tiny_trace(samples: int = 2048, sizes: tuple[int, ...] = SIZES, seed: int = 0) -> InMemoryTrace:
    """Zipf-skewed ids over small tables (co-writers, outdated copies and evictions abound),
    three dense features and labels from a logistic model of both."""
    rng = np.random.default_rng(seed)
    ids = np.stack([np.minimum(rng.zipf(1.4, samples) - 1, s - 1) for s in sizes], axis=1)
    dense = rng.normal(size=(samples, 3)).astype(np.float32)
    logit = dense @ np.array([1.0, -0.5, 0.5]) - 1.0
    for f, size in enumerate(sizes):
        logit += rng.normal(size=size)[ids[:, f]]
    labels = (rng.random(samples) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float32)
    return InMemoryTrace.from_local_ids(ids, sizes, labels, dense)


def tiny_split(seed: int = 0) -> tuple[InMemoryTrace, SampleChunk]:
    return split_trace(tiny_trace(seed=seed), SETTINGS.eval_fraction)  # type: ignore[return-value]


def train_tiny(kind: str, split=None, *, settings: TrainSpec = SETTINGS, policy: str = "lru",
               consistency: str = "strict", cache_rows: int = CACHE_ROWS, seed: int = 0,
               dtype: torch.dtype = torch.float32, **knobs: Any) -> TrainOutcome:  # fmt: skip
    train, held_out = split if split is not None else tiny_split()
    scheduler = create(kind, workers=WORKERS, batch_size=BATCH, seed=seed, **knobs)
    return train_scheduler(
        train, held_out, scheduler, cache_rows=cache_rows, embedding_dim=DIM, settings=settings,
        policy=policy, consistency=consistency, dtype=dtype,
    )  # fmt: skip
