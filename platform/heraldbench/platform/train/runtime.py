"""Where and how a training run executes: device, threads, a prefetching thread, a stopwatch."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from heraldbench.platform.exceptions import SpecError

__all__ = ["Prefetched", "Stopwatch", "configure_threads", "resolve_device"]


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
        affinity = getattr(os, "sched_getaffinity", None)
        cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
        threads = cores - reserve
    count = max(1, threads)
    torch.set_num_threads(count)
    return count


class Prefetched:
    """An iterator run ``depth`` items ahead in a background thread.

    The decision stream is a pipeline stage of its own, as a scheduler computing ahead of the
    trainers would be: the simulator's kernels run while torch's run (torch releases the GIL
    inside its kernels; the simulator's numba kernels hold it, so the trainer's Python steps
    may wait for one to return). Exceptions reach the consumer; :meth:`close` stops the
    thread.
    """

    _END = object()

    def __init__(self, iterator: Iterator, depth: int):
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._fill, args=(iterator,), daemon=True)
        self._thread.start()

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _fill(self, iterator: Iterator) -> None:
        try:
            for item in iterator:
                if not self._put(item):
                    return
            self._put(self._END)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            self._put(exc)

    def __iter__(self) -> Prefetched:
        return self

    def __next__(self):
        item = self._queue.get()
        if item is self._END:
            raise StopIteration
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


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
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
