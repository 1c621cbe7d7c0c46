"""Produce a trace's next chunks on a second core while the consumer works on the current one.

The synthetic generator's kernels and the simulator's release the GIL, so on a 2-core machine
generation leaves the simulator's critical path (trace generation must never be what a run waits for).
Order and content are unchanged: the thread only runs the producer ahead of its consumer.

While a read-ahead runs, a thread waiting for the GIL gets it within :data:`SWITCH_INTERVAL_S`
instead of CPython's 5 ms. The producer takes the GIL back many times per item, after every
numba kernel or numpy call that released it; beside a consumer that holds the GIL for its own
Python work (a trainer's host side), it otherwise waits up to 5 ms each time and falls behind
(benchmarks/bench_read_ahead.py). The setting is the process's: every thread of it, a
simulation's read-ahead included, runs with it until the last read-ahead ends and restores the
value it found (a value set meanwhile is lost).
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["read_ahead"]

T = TypeVar("T")

_DONE = object()
_POLL_SECONDS = 0.1
#: The longest a thread waits for the GIL while a read-ahead runs (seconds).
SWITCH_INTERVAL_S = 2e-4
_switch = {"lock": threading.Lock(), "running": 0, "saved": 0.0}


def read_ahead(items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """Yield ``items`` in order while a daemon thread keeps up to ``depth`` of them ready.

    An exception raised by ``items`` is re-raised here, at the position it occurred; closing or
    abandoning the returned generator stops the thread at its next item.
    """
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                if not _offer(ready, (item, None), stop):
                    return
            _offer(ready, (_DONE, None), stop)
        except BaseException as error:  # handed to the consumer, who re-raises it
            _offer(ready, (_DONE, error), stop)

    with _short_gil_waits():
        worker = threading.Thread(target=produce, name="heraldbench-read-ahead", daemon=True)
        worker.start()
        try:
            while True:
                item, error = ready.get()
                if error is not None:
                    raise error
                if item is _DONE:
                    return
                yield item
        finally:
            stop.set()
            worker.join()


@contextmanager
def _short_gil_waits():
    """:data:`SWITCH_INTERVAL_S` while any read-ahead runs; the process's own setting after."""
    with _switch["lock"]:
        if not _switch["running"]:
            _switch["saved"] = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch["saved"], SWITCH_INTERVAL_S))
        _switch["running"] += 1
    try:
        yield
    finally:
        with _switch["lock"]:
            _switch["running"] -= 1
            if not _switch["running"]:
                sys.setswitchinterval(_switch["saved"])


def _offer(ready: queue.Queue, entry: tuple, stop: threading.Event) -> bool:
    """Put ``entry`` unless the consumer has gone; False when it has."""
    while not stop.is_set():
        try:
            ready.put(entry, timeout=_POLL_SECONDS)
            return True
        except queue.Full:
            continue
    return False
