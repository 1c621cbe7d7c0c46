"""Produce a trace's next chunks on a second core while the consumer works on the current one.

The synthetic generator's kernels and the simulator's release the GIL, so on a 2-core machine
generation leaves the simulator's critical path (trace generation must never be what a run waits for).
Order and content are unchanged: the thread only runs the producer ahead of its consumer.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

__all__ = ["read_ahead"]

T = TypeVar("T")

_DONE = object()
_POLL_SECONDS = 0.1


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


def _offer(ready: queue.Queue, entry: tuple, stop: threading.Event) -> bool:
    """Put ``entry`` unless the consumer has gone; False when it has."""
    while not stop.is_set():
        try:
            ready.put(entry, timeout=_POLL_SECONDS)
            return True
        except queue.Full:
            continue
    return False
