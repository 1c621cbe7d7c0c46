"""Where and how a training run executes: device, threads, a stopwatch."""

from __future__ import annotations

import time
from contextlib import contextmanager

import torch

from heraldbench.platform._cores import usable_cores
from heraldbench.platform.exceptions import SpecError

__all__ = ["Stopwatch", "configure_threads", "resolve_device"]


def resolve_device(name: str) -> torch.device:
    """``auto`` (CUDA when present, else CPU), ``cpu`` or ``cuda``."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise SpecError("train.device is 'cuda' but torch sees no CUDA device; use cpu or auto")
    if name not in ("cpu", "cuda"):
        raise SpecError(f"train.device must be auto, cpu or cuda, got {name!r}")
    return torch.device(name)


def configure_threads(threads: int | None = None, reserve: int = 1) -> int:
    """Set torch's intra-op threads: ``threads``, or the cores this process may use minus
    ``reserve`` (one for the thread that computes the decision stream ahead), at least 1.

    Measured on a 2-core machine (benchmarks/bench_trainer.py): one more busy thread than cores
    makes torch's OpenMP workers wait on each other, and throughput falls several-fold, so the
    decision stream's core is not given to torch as well.
    """
    if threads is None:
        threads = usable_cores() - reserve
    count = max(1, threads)
    torch.set_num_threads(count)
    return count


class Stopwatch:
    """Seconds per named phase; synchronises CUDA so that each phase pays for its own kernels."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.cuda:
                torch.cuda.synchronize()
            self.record(name, time.perf_counter() - start)

    def record(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to phase ``name``."""
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
