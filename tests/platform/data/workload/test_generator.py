"""Traces generated from a profile: deterministic, chunk-independent, randomly accessible."""

from __future__ import annotations

import hashlib
import threading

import numpy as np
import pytest

from heraldbench.platform.data.workload import ProfileTrace, save_profile
from heraldbench.platform.data.workload import trace as trace_module
from heraldbench.platform.data.workload.schema import HeadGiven
from heraldbench.platform.data.workload.trace import SyntheticProfileSpec
from tests.platform.data.workload.planted import SAMPLES, planted_profile


def _trace(samples=SAMPLES, seed=0, scale=1.0, given=False):
    return ProfileTrace(planted_profile(given=given), samples=samples, seed=seed, scale=scale)


def test_same_seed_same_trace_other_seed_other_trace() -> None:
    a, b, c = _trace(seed=1).materialize(), _trace(seed=1).materialize(), _trace(seed=2).materialize()
    assert np.array_equal(a.ids, b.ids) and np.array_equal(a.labels, b.labels)
    assert np.array_equal(a.dense, b.dense)
    assert (a.ids != c.ids).mean() > 0.3


def test_traces_are_the_same_from_version_to_version() -> None:
    """Golden digests of two traces' ids (the planted profile, and the built-in default at scale
    0.05), so that a faster generator cannot change the traces that old specs and the README's
    results were measured on. A deliberate change of the model updates them and says so."""
    planted = _trace(seed=3).materialize().ids
    default = SyntheticProfileSpec(profile="criteo-kaggle", samples=50_000, scale=0.05, seed=1)
    assert hashlib.sha256(planted.tobytes()).hexdigest() == (
        "84fc2efae244ff60e98fac3896b6ca999d4d94afbdb8fb2fae8957e04c2b1cce"
    )
    assert hashlib.sha256(default.open().materialize().ids.tobytes()).hexdigest() == (
        "09edc0e25d9fc70bbe456a78617ed5a6b5f1b622eb9cb1d087cc59cbda1321bb"
    )


@pytest.mark.parametrize("chunk", [1, 97, 4096, SAMPLES])
def test_chunked_generation_equals_one_shot(chunk: int) -> None:
    whole = _trace().materialize()
    parts = list(_trace().chunks(chunk))
    assert np.array_equal(np.concatenate([p.ids for p in parts]), whole.ids)
    assert np.array_equal(np.concatenate([p.labels for p in parts]), whole.labels)


def test_a_simulation_reads_the_same_ids_without_labels_or_features() -> None:
    """``chunks(..., ids_only=True)`` (what a counting run reads) skips the labels and dense
    features, and gives the very ids of the full chunks."""
    whole = _trace().materialize()
    parts = list(_trace().chunks(97, ids_only=True))
    assert np.array_equal(np.concatenate([p.ids for p in parts]), whole.ids)
    assert all(p.labels.size == 0 and p.dense.size == 0 for p in parts)


@pytest.mark.parametrize("given", [False, True])
@pytest.mark.parametrize("ring", [64, trace_module.RING_SAMPLES])
def test_random_access_equals_the_stream(monkeypatch, ring: int, given: bool) -> None:
    """Random access follows copies back to their origin; the stream plans each sample's sources
    ahead and copies them from its ring, or (ring of 64) recomputes the older ones."""
    monkeypatch.setattr(trace_module, "RING_SAMPLES", ring)
    whole = _trace(given=given).materialize()
    positions = np.random.default_rng(0).integers(0, SAMPLES, 2000)
    picked = _trace(given=given).samples_at(positions)
    assert np.array_equal(picked.ids, whole.ids[positions])
    assert np.array_equal(picked.labels, whole.labels[positions])
    assert np.array_equal(_trace(given=given).ids_at(positions), whole.ids[positions])


@pytest.mark.parametrize("given", [False, True])
@pytest.mark.parametrize("ring", [64, trace_module.RING_SAMPLES])
@pytest.mark.parametrize("cores", [2, 3])
def test_ids_made_on_several_cores_equal_the_stream(monkeypatch, ring: int, cores: int,
                                                    given: bool) -> None:  # fmt: skip
    """A block copies only its own fields, so groups of blocks are made by threads of their own
    (FAE's spilling pass): the very ids of the stream, in every block of samples (a head tuple
    drawn given a block of another group recomputes that block's draw)."""
    monkeypatch.setattr(trace_module, "RING_SAMPLES", ring)
    monkeypatch.setattr(trace_module, "BLOCK_SAMPLES", 1000)
    whole = _trace(given=given).materialize()
    parts = list(_trace(given=given).id_blocks_on(cores))
    assert [len(p) for p in parts] == [1000] * 8
    assert np.array_equal(np.concatenate([p.ids for p in parts]), whole.ids)
    assert _trace().id_blocks_on(1) is None
    groups = trace_module._block_groups(_trace()._kernels, cores)
    assert len(groups) == cores and groups[0][0] == 0 and groups[-1][1] == 4
    assert all(a < b for a, b in groups)


def test_a_reader_that_stops_early_leaves_no_generating_thread(monkeypatch) -> None:
    monkeypatch.setattr(trace_module, "BLOCK_SAMPLES", 500)
    blocks = _trace().id_blocks_on(2)
    next(blocks)
    assert any(t.name.startswith("heraldbench-gen") for t in threading.enumerate())
    blocks.close()
    assert not any(t.name.startswith("heraldbench-gen") for t in threading.enumerate())


def test_a_failing_generating_thread_fails_the_reader_and_leaves_no_thread(monkeypatch) -> None:
    monkeypatch.setattr(trace_module, "BLOCK_SAMPLES", 500)
    made = trace_module._GroupMaker.make

    def failing(self, start, ids):
        if start >= 1000 and self.group[0] > 0:
            raise RuntimeError("disk of the helper gone")
        made(self, start, ids)

    monkeypatch.setattr(trace_module._GroupMaker, "make", failing)
    blocks = _trace().id_blocks_on(2)
    assert len(next(blocks)) == 500 and len(next(blocks)) == 500
    with pytest.raises(RuntimeError, match="disk of the helper gone"):
        next(blocks)
    assert not any(t.name.startswith("heraldbench-gen") for t in threading.enumerate())


def test_ids_fit_the_layout_and_blocks_recur_together() -> None:
    trace = _trace().materialize()
    local = trace.ids - trace.layout.offsets
    assert (local >= 0).all() and (local < np.asarray(trace.layout.sizes)).all()
    users = local[:, :3]
    _, first = np.unique(users, axis=0, return_index=True)
    repeated_tuples = 1 - len(first) / len(users)
    assert repeated_tuples > 0.5  # head tuples and repeats: whole tuples recur
    assert abs(trace.labels.mean() - 0.25) < 0.03


def _head_pairs(local: np.ndarray, given: HeadGiven, parent, child) -> np.ndarray:
    """Per planted entry (parent row, child tuple), the share of the samples whose parent holds
    that row and whose child holds one of its head tuples that hold the entry's tuple."""
    p_rows, c_rows = _tuple_rows(local, parent), _tuple_rows(local, child)
    both = (p_rows >= 0) & (c_rows >= 0)
    shares = []
    for row, tuple_ in zip(given.parent_tuples, given.tuples, strict=True):
        at = both & (p_rows == row)
        shares.append((at & (c_rows == tuple_)).sum() / max(1, at.sum()))
    return np.array(shares)


def _tuple_rows(local: np.ndarray, block) -> np.ndarray:
    """The head tuple row each sample's block holds (-1: not one of its head tuples)."""
    fields, ranks = block
    rows = np.full(len(local), -1)
    for r, tuple_ in enumerate(ranks):
        rows[(local[:, fields] == tuple_).all(axis=1)] = r
    return rows


def test_head_tuples_go_with_their_parents_as_planted() -> None:
    """Where a parent block draws a head tuple, its child draws from that tuple's planted law:
    each planted entry's share within 0.06 of its probability (with no law given, the child's
    own probabilities instead)."""
    profile = planted_profile(given=True)
    local = _trace(given=True, samples=40_000).materialize()
    local = local.ids - local.layout.offsets
    start = np.cumsum([0] + [len(b.fields) for b in profile.blocks])
    blocks = [(list(range(start[k], start[k + 1])), b.head_tuples.ranks)
              for k, b in enumerate(profile.blocks)]  # fmt: skip
    for child in (1, 3):  # P given U, Y given P
        given = profile.blocks[child].given
        shares = _head_pairs(local, given, blocks[given.block], blocks[child])
        assert np.abs(shares - np.asarray(given.probability)).max() < 0.06, (child, shares)
    independent = _trace(samples=40_000).materialize()
    shares = _head_pairs(independent.ids - independent.layout.offsets, profile.blocks[1].given,
                         blocks[0], blocks[1])  # fmt: skip
    assert np.abs(shares - np.asarray(profile.blocks[1].given.probability)).max() > 0.3


def test_any_length_streams_with_memory_independent_of_length() -> None:
    long = _trace(samples=300_000)
    assert long.layout.total_rows > _trace().layout.total_rows  # tables keep growing
    seen = 0
    for chunk in long.chunks(1 << 16):
        seen += len(chunk)
    assert seen == 300_000


def test_scale_makes_a_miniature() -> None:
    """At scale s, s * L samples stand for L samples: tables end s times as large."""
    heads = sum(len(f.head) for f in planted_profile().fields)
    full, small = _trace(samples=200_000), _trace(samples=20_000, scale=0.1)
    ratio = (small.layout.total_rows - heads) / (full.layout.total_rows - heads)
    assert ratio == pytest.approx(0.1, rel=0.1)
    ids = small.materialize().ids - small.layout.offsets
    assert (ids < np.asarray(small.layout.sizes)).all()


def test_spec_opens_a_profile_file_and_refuses_a_missing_one(tmp_path) -> None:
    path = save_profile(planted_profile(), tmp_path / "p.yaml")
    spec = SyntheticProfileSpec(profile=str(path), samples=1000, seed=3)
    assert spec.open().layout.names == ("U1", "U2", "U3", "P1", "P2", "X", "Y")
    from heraldbench.platform.exceptions import ProfileError

    with pytest.raises(ProfileError, match="does not exist"):
        SyntheticProfileSpec(profile=str(tmp_path / "nope.yaml"), samples=10).check()
