"""Small training specs for the distributed trainer's tests (a few dozen iterations), and the
rank processes a test's launch started."""

from __future__ import annotations

from typing import Any

import psutil


def rank_processes() -> dict[int, psutil.Process]:
    """This test process's rank processes, by rank."""
    found = {}
    for child in psutil.Process().children(recursive=True):
        try:
            line = child.cmdline()
        except psutil.Error:
            continue
        if "heraldbench.platform.distributed.worker" in line:
            found[int(line[-1])] = child
    return found


def train_spec(kinds: list[str], *, workers: int = 2, backend: str = "distributed",
               samples: int = 3000, **train: Any) -> dict[str, Any]:  # fmt: skip
    """A mode: train spec on a tiny synthetic Criteo-like trace (co-writers and evictions
    abound: 5% caches)."""
    return {
        "name": "dist-test",
        "mode": "train",
        "dataset": {"kind": "synthetic-criteo", "samples": samples, "seed": 1, "scale": 0.001},
        "cluster": {"workers": workers, "batch_size": 32},
        "cache": {"ratio": 0.05},
        "embedding_dim": 8,
        "schedulers": [{"kind": k} for k in kinds],
        "train": {"model": "small", "backend": backend, "device": "cpu", **train},
    }
