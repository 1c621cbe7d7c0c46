"""A trace spilled to disk on its first read: the same samples afterwards, with random access,
without reading the source again; no room, no spill; an abandoned read, no spill; a reader of
ids alone spills ids alone where the source makes them apart."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

from heraldbench.platform.data import InMemoryTrace, SpilledTrace
from heraldbench.platform.data import spill as spill_module
from tests.platform.data.streamed import (
    ComputedSamplesTrace,
    StreamedIdsTrace,
    StreamedOnCoresTrace,
    StreamedTrace,
)


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
    assert spilled.random_access and spilled.describe()["spilled"] == "samples"
    _same(spilled.materialize(), source)  # read back from the files
    positions = np.random.default_rng(1).integers(0, source.num_samples, 3_000)  # repeats
    positions[:5] = [4_999, 0, 4_999, 17, 0]
    _same(spilled.samples_at(positions), source.samples_at(positions))
    np.testing.assert_array_equal(spilled.ids_at(positions), source.ids[positions])
    assert streamed.passes == 1


def test_consecutive_samples_read_as_they_lie_are_those_of_the_source(tmp_path):
    source = _trace()
    spilled = SpilledTrace(StreamedTrace(source), directory=str(tmp_path))
    spilled.materialize()
    run = np.arange(300, 2_100)  # crosses spans of 512 samples, starting inside one
    _same(spilled.samples_at(run), source.samples_at(run))
    np.testing.assert_array_equal(spilled.ids_at(run), source.ids[run])
    last = np.arange(4_488, 5_000)  # ends at the trace's last sample
    np.testing.assert_array_equal(spilled.ids_at(last), source.ids[last])
    for almost in (np.r_[300:900, 901:1_000], np.r_[300:900, 899:1_000], run[::-1]):
        _same(spilled.samples_at(almost), source.samples_at(almost))  # not one run: gathered


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


def test_a_reader_of_ids_spills_ids_and_the_rest_follows_when_asked(tmp_path):
    """A simulation reads ids only: a source that makes them apart (a profile) is read that way
    and only its ids are written; the first read of whole samples spills the rest, once."""
    streamed = StreamedIdsTrace(_trace())
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    ids = np.concatenate([c.ids for c in spilled.chunks(700, ids_only=True)])
    np.testing.assert_array_equal(ids, streamed.source.ids)
    assert (streamed.id_passes, streamed.passes) == (1, 0)
    assert spilled.random_access and spilled.describe()["spilled"] == "ids"
    positions = np.random.default_rng(1).integers(0, spilled.num_samples, 300)
    np.testing.assert_array_equal(spilled.ids_at(positions), streamed.source.ids[positions])
    assert streamed.id_passes == 1
    _same(spilled.samples_at(positions), streamed.source.samples_at(positions))
    assert streamed.passes == 1 and spilled.describe()["spilled"] == "samples"
    _same(spilled.materialize(), streamed.source)
    assert (streamed.id_passes, streamed.passes) == (1, 1)


def test_a_reader_of_ids_spills_whole_samples_of_a_source_that_reads_them_anyway(tmp_path):
    streamed = StreamedTrace(_trace())
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    list(spilled.chunks(700, ids_only=True))
    assert spilled.describe()["spilled"] == "samples"
    _same(spilled.materialize(), streamed.source)
    assert streamed.passes == 1


def test_a_spilling_pass_makes_the_ids_on_every_core(tmp_path, monkeypatch):
    """The reader of the spilling pass (FAE's sampled counts) leaves the cores free: a source
    that can make its ids on several (a profile's generator) is asked to."""
    monkeypatch.setattr(spill_module, "usable_cores", lambda: 2)
    streamed = StreamedOnCoresTrace(_trace())
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    ids = np.concatenate([c.ids for c in spilled.chunks(700, ids_only=True)])
    np.testing.assert_array_equal(ids, streamed.source.ids)
    assert streamed.cores_asked == [2] and spilled.describe()["spilled"] == "ids"
    np.testing.assert_array_equal(spilled.materialize().ids, streamed.source.ids)
    assert streamed.cores_asked == [2] and streamed.passes == 1  # the rest, one whole pass


def test_a_source_that_computes_labels_from_ids_is_never_read_again(tmp_path):
    """A profile's labels and dense features are a function of positions and ids: with the
    ids on disk, whole samples are computed from them, with no second pass."""
    streamed = ComputedSamplesTrace(_trace())
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    list(spilled.chunks(700, ids_only=True))
    positions = np.random.default_rng(3).integers(0, spilled.num_samples, 300)
    _same(spilled.samples_at(positions), streamed.source.samples_at(positions))
    _same(spilled.materialize(), streamed.source)
    assert (streamed.id_passes, streamed.passes) == (1, 0)
    assert streamed.computed == 300 + 5_000 and spilled.describe()["spilled"] == "ids"


def test_whole_samples_that_fail_to_spill_are_not_tried_again(tmp_path, monkeypatch):
    """The disk fills while whole samples are spilled after the ids: the source serves them
    from then on, and the pass is not retried on every read."""
    streamed = StreamedIdsTrace(_trace())
    spilled = SpilledTrace(streamed, directory=str(tmp_path))
    list(spilled.chunks(700, ids_only=True))
    monkeypatch.setattr(spill_module, "_appended", lambda files, chunk: False)
    positions = np.arange(10, 20)
    for _ in range(3):
        _same(spilled.samples_at(positions), streamed.source.samples_at(positions))
    assert spilled.describe()["spilled"] == "ids"
    assert streamed.passes == 1 + 3  # the one spilling pass, then one read per call (no room)
