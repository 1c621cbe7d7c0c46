"""A trace spilled to disk on its first read: the same samples afterwards, with random access,
without reading the source again; no room, no spill; an abandoned read, no spill."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

from heraldbench.platform.data import InMemoryTrace, SpilledTrace
from heraldbench.platform.data import spill as spill_module
from tests.platform.data.streamed import StreamedTrace


def _trace(samples: int = 5_000, dense: int = 3) -> InMemoryTrace:
    rng = np.random.default_rng(5)
    sizes = [11, 300, 4_000]
    local = np.stack([rng.integers(0, s, samples) for s in sizes], axis=1)
    ids = InMemoryTrace.from_local_ids(local, sizes)
    labels = (rng.random(samples) < 0.3).astype(np.float32)
    return InMemoryTrace(ids.ids, labels, rng.random((samples, dense)), ids.layout)


def _same(a, b) -> None:
    np.testing.assert_array_equal(a.ids, b.ids)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.dense, b.dense)


@pytest.fixture(autouse=True)
def small_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill_module, "_SPAN", 512)  # many spans on a small trace


def test_after_one_read_the_trace_comes_from_disk_with_random_access(tmp_path):
    source = _trace()
    streamed = StreamedTrace(source)
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    assert not spilled.random_access
    _same(spilled.materialize(), source)
    assert spilled.random_access and spilled.describe()["spilled"]
    _same(spilled.materialize(), source)  # read back from the files
    positions = np.random.default_rng(1).integers(0, source.num_samples, 3_000)  # repeats
    positions[:5] = [4_999, 0, 4_999, 17, 0]
    _same(spilled.samples_at(positions), source.samples_at(positions))
    np.testing.assert_array_equal(spilled.ids_at(positions), source.ids[positions])
    assert streamed.passes == 1


def test_a_read_abandoned_part_way_spills_nothing(tmp_path):
    streamed = StreamedTrace(_trace())
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    chunks = spilled.chunks(100)
    next(chunks)
    chunks.close()
    assert not spilled.random_access
    _same(spilled.materialize(), streamed.source)
    assert spilled.random_access and streamed.passes == 2


def test_without_room_on_the_disk_the_source_is_read_each_time(tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(spill_module.shutil, "disk_usage", lambda _: usage(1, 1, 10 << 20))
    streamed = StreamedTrace(_trace())
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    assert spilled.bytes_needed == 5_000 * 4 * (3 + 3 + 1)
    for _ in range(2):
        _same(spilled.materialize(), streamed.source)
    assert streamed.passes == 2 and not spilled.describe()["spilled"]


def test_a_disk_that_fills_part_way_leaves_the_source_to_serve(tmp_path, monkeypatch):
    appended = spill_module._appended
    calls = []

    def fills_on_the_third(files, chunk):
        calls.append(len(chunk))
        return appended(files, chunk) if len(calls) < 3 else False

    monkeypatch.setattr(spill_module, "_appended", fills_on_the_third)
    streamed = StreamedTrace(_trace())
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    _same(spilled.materialize(), streamed.source)  # every sample, from the source
    assert len(calls) == 3 and not spilled.random_access and not spilled.describe()["spilled"]


def test_a_reader_that_stops_at_the_last_sample_leaves_it_spilled(tmp_path):
    streamed = StreamedTrace(_trace())
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    chunks, taken = spilled.chunks(1000), 0
    while taken < spilled.num_samples:
        taken += len(next(chunks))
    chunks.close()
    assert spilled.random_access
    _same(spilled.materialize(), streamed.source)
    assert streamed.passes == 1
