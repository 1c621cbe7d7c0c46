"""read_ahead: the next chunks produced on another thread, in order, errors where they happen."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from heraldbench.platform.data import read_ahead


def _count(n: int, fail_at: int | None = None) -> Iterator[int]:
    for i in range(n):
        if i == fail_at:
            raise ValueError(f"bad item {i}")
        yield i


def _readers() -> int:
    return sum(t.name == "heraldbench-read-ahead" for t in threading.enumerate())


def test_items_come_in_order_and_all_of_them() -> None:
    assert list(read_ahead(_count(100), depth=3)) == list(range(100))


def test_an_error_is_raised_at_the_item_where_it_happened() -> None:
    seen = []
    with pytest.raises(ValueError, match="bad item 5"):
        for item in read_ahead(_count(10, fail_at=5)):
            seen.append(item)
    assert seen == [0, 1, 2, 3, 4]


def test_the_producer_runs_ahead_of_a_slow_consumer_but_no_further_than_depth() -> None:
    produced = []

    def items() -> Iterator[int]:
        for i in range(10):
            produced.append(i)
            yield i

    stream = read_ahead(items(), depth=2)
    assert next(stream) == 0
    deadline = time.monotonic() + 5
    while len(produced) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    # one handed out, two queued, one made and waiting for room
    assert produced == [0, 1, 2, 3]
    assert list(stream) == list(range(1, 10))


def test_abandoning_the_stream_stops_its_thread() -> None:
    before = _readers()
    stream = read_ahead(_count(1_000_000), depth=2)
    assert next(stream) == 0
    stream.close()
    assert _readers() == before


def test_depth_must_be_positive() -> None:
    with pytest.raises(ValueError, match="depth must be at least 1, got 0"):
        next(read_ahead(_count(3), depth=0))


def test_threads_wait_briefly_for_the_gil_while_any_read_ahead_runs() -> None:
    """The trainer's decision stream and its consumer share the GIL: while a read-ahead runs, a
    waiting thread gets it within SWITCH_INTERVAL_S; the process's own setting comes back when
    the last one ends, however it ends."""
    import sys

    from heraldbench.platform.data import _readahead

    own = sys.getswitchinterval()
    short = pytest.approx(_readahead.SWITCH_INTERVAL_S, rel=1e-3)  # CPython keeps microseconds
    first, second = read_ahead(iter(range(3))), read_ahead(iter(range(50)))
    assert next(first) == 0 and sys.getswitchinterval() == short
    assert next(second) == 0
    assert list(first) == [1, 2]  # the first ends; the second still runs
    assert sys.getswitchinterval() == short
    second.close()  # abandoned part-way
    assert sys.getswitchinterval() == own
    failing = read_ahead(_count(10, fail_at=2))
    with pytest.raises(ValueError, match="bad item 2"):
        list(failing)
    assert sys.getswitchinterval() == own
