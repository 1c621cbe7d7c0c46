"""The kernel against the per-access reference over random clusters, tables and traces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.placements import (
    ColumnShard,
    JaggedIds,
    TableInfo,
    TablePlacement,
    Topology,
    account,
    create,
    registered,
)
from heraldbench.platform.placements.reference import account_reference
from heraldbench.platform.placements.stats import stats_of_batches


@st.composite
def cases(draw):
    topology = Topology(draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    sizes = draw(st.lists(st.integers(1, 30), min_size=1, max_size=3))
    pooled = draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
    batch = draw(st.integers(1, 3))
    samples = draw(st.integers(0, 4)) * batch * topology.devices + draw(st.integers(0, 5))
    seed = draw(st.integers(0, 2**31))
    kind = draw(st.sampled_from(sorted(registered())))
    return topology, sizes, pooled, batch, samples, seed, kind


def _batches(sizes, samples, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 4, (len(sizes), samples)).astype(np.int32)
    values = [rng.integers(0, s, int(lengths[t].sum())) for t, s in enumerate(sizes)]
    return [JaggedIds(lengths, np.concatenate(values).astype(np.int32))]


@settings(max_examples=60, deadline=None)
@given(cases())
def test_kernel_equals_reference_on_random_cases(case):
    topology, sizes, pooled, batch, samples, seed, kind = case
    tables = tuple(TableInfo(f"t{i}", s, 5, p) for i, (s, p) in
                   enumerate(zip(sizes, pooled, strict=True)))
    batches = _batches(sizes, samples, seed)
    stats = stats_of_batches(batches, tuple(sizes))
    knobs = {"flexshard": {"batch_size": batch, "memory_headroom": 2.0},
             "column-wise": {"shard_dim": 2}}.get(kind, {})
    placement = create(kind, **knobs).place(tables, topology, stats)
    fast, slow = account(placement, batches, batch), account_reference(placement, batches, batch)
    assert fast.iterations == slow.iterations and fast.peak_lookups == slow.peak_lookups
    for name in ("lookups", "forward", "backward", "sync", "ids_sent", "host_memory_reads"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), err_msg=name)
    np.testing.assert_allclose(fast.forward.sum(), fast.backward.sum())


def test_bad_values_are_named_in_the_error():
    with pytest.raises(SpecError, match="hosts must be a positive integer, got 0"):
        Topology(0, 2)
    with pytest.raises(SpecError, match="rows must be >= 1, got 0"):
        TableInfo("t", 0, 4)
    with pytest.raises(SpecError, match="column shards cover 3 of 4 columns"):
        scope, owner = np.zeros(2, np.int8), np.zeros(2, np.int16)
        TablePlacement(TableInfo("t", 2, 4), (ColumnShard(0, 3, scope, owner),))
    with pytest.raises(SpecError, match="shard_dim must be a positive integer, got 0"):
        create("column-wise", shard_dim=0)
    with pytest.raises(SpecError, match="needs the trace's access statistics"):
        create("flexshard").place((TableInfo("t", 2, 4),), Topology(1, 2))
