"""Where and how a training run executes: device, threads, host-to-device copies, a stopwatch.

On a GPU the host runs ahead: it queues an iteration's kernels and goes on with the next
iteration's bookkeeping while the GPU works, so the two overlap. Two things would stop it: a
copy from pageable host memory (PyTorch waits for the stream to drain after one) and a
synchronisation per timed phase. Copies go from pinned memory without waiting
(:func:`to_device`), and the stopwatch waits for the GPU only where the caller drains it.
"""

from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext

import numpy as np
import torch
from torch.profiler import record_function

from heraldbench.platform._cores import usable_cores
from heraldbench.platform.exceptions import SpecError

__all__ = ["Stopwatch", "configure_threads", "resolve_device", "to_device"]


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


def to_device(array: np.ndarray, device: torch.device, dtype: torch.dtype | None = None
              ) -> torch.Tensor:  # fmt: skip
    """``array`` as a tensor on ``device`` (in ``dtype``, else its own). On the CPU it shares
    the array's memory where no conversion is needed; to a GPU it is staged in pinned memory
    and copied without waiting (PyTorch's pinned-memory cache keeps the staging block until
    the copy is done)."""
    tensor = torch.from_numpy(np.ascontiguousarray(array))
    if device.type != "cuda":
        return tensor.to(device, dtype)
    return tensor.pin_memory().to(device, dtype, non_blocking=True)


class Stopwatch:
    """Seconds per named phase of the host's time.

    On a GPU a phase's kernels may still run after it ends: :meth:`drain` waits for them and
    books the wait as phase ``drain`` (call it before reading results or stopping a clock).
    ``sync_phases`` waits at the end of every phase instead, so that each phase pays for its
    own kernels: the attribution a profile wants, at the price of the overlap.
    """

    def __init__(self, device: torch.device, sync_phases: bool = False):
        self.cuda = device.type == "cuda"
        self.sync_phases = sync_phases
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str):
        start = time.perf_counter()
        # Under torch's profiler, each phase is a range of its own ("heraldbench/<phase>").
        profiled = torch.autograd._profiler_enabled()
        label = record_function(f"heraldbench/{name}") if profiled else nullcontext()
        try:
            with label:
                yield
        finally:
            if self.cuda and self.sync_phases:
                torch.cuda.synchronize()
            self.record(name, time.perf_counter() - start)

    def drain(self) -> None:
        """Wait for the GPU's queued work; the wait is phase ``drain``."""
        if self.cuda:
            start = time.perf_counter()
            torch.cuda.synchronize()
            self.record("drain", time.perf_counter() - start)

    def record(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to phase ``name``."""
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
