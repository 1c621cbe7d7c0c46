"""The accounting's kernel against the per-access reference, and its exact invariants."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.placements import (
    JaggedIds,
    TableInfo,
    Topology,
    account,
    create,
    memory_use,
    registered,
)
from heraldbench.platform.placements.reference import account_reference
from heraldbench.platform.placements.stats import stats_of_batches

TOPOLOGY = Topology(hosts=2, devices_per_host=3, device_memory_bytes=1 << 30)
BATCH = 4  # samples per device per iteration


def made_batches(sizes, samples, seed, max_len=1, chunk=48):
    """Zipf-like ids, ragged up to ``max_len`` ids per sample per table, in chunks."""
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, samples, chunk):
        n = min(chunk, samples - start)
        lengths = rng.integers(1 if max_len == 1 else 0, max_len + 1, (len(sizes), n))
        values = [np.minimum(rng.zipf(1.3, int(lengths[t].sum())) - 1, size - 1)
                  for t, size in enumerate(sizes)]
        out.append(JaggedIds(lengths.astype(np.int32), np.concatenate(values).astype(np.int32)))
    return out


def tables_of(sizes, dim=8, pooled=None):
    pooled = pooled or [True] * len(sizes)
    return tuple(TableInfo(f"t{i}", size, dim, p) for i, (size, p) in
                 enumerate(zip(sizes, pooled, strict=True)))


KNOBS = {"flexshard": {"batch_size": BATCH, "memory_headroom": 1.0},
         "column-wise": {"shard_dim": 3}}


def placed(kind, tables, batches):
    stats = stats_of_batches(batches, tuple(t.rows for t in tables))
    return create(kind, **KNOBS.get(kind, {})).place(tables, TOPOLOGY, stats)


def assert_same(a, b):
    assert a.iterations == b.iterations
    assert a.peak_lookups == b.peak_lookups
    for name in ("lookups", "forward", "backward", "sync", "ids_sent", "host_memory_reads"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("kind", sorted(registered()))
@pytest.mark.parametrize("max_len", [1, 3])
def test_kernel_equals_reference(kind, max_len):
    sizes = (50, 7, 200)
    tables = tables_of(sizes, pooled=[True, False, True])
    batches = made_batches(sizes, 24 * 5 + 7, seed=max_len, max_len=max_len)
    placement = placed(kind, tables, batches)
    assert_same(account(placement, batches, BATCH), account_reference(placement, batches, BATCH))


def test_data_parallel_sends_nothing_forward():
    sizes = (30, 30)
    batches = made_batches(sizes, 240, seed=1)
    traffic = account(placed("data-parallel", tables_of(sizes), batches), batches, BATCH)
    assert traffic.forward.sum() == traffic.backward.sum() == traffic.ids_sent.sum() == 0
    assert traffic.alltoall_bytes_per_tier().sum() == 0
    assert traffic.sync.sum() > 0


def one_hot_requests(batches):
    """(requesting device, table, local id) of every read, in trace order (one-hot)."""
    devices = TOPOLOGY.devices
    for batch in batches:
        ids = batch.values.reshape(batch.lengths.shape)
        for j in range(batch.samples):
            for t in range(ids.shape[0]):
                yield (j % (devices * BATCH)) // BATCH, t, int(ids[t, j])


@pytest.mark.parametrize("kind", ["table-wise", "row-wise", "table-row-wise"])
def test_one_hot_bytes_are_a_function_of_trace_and_plan(kind):
    sizes, dim = (40, 9, 100), 8
    batches = made_batches(sizes, 24 * 10, seed=3, chunk=24)
    placement = placed(kind, tables_of(sizes, dim), batches)
    expected = np.zeros((TOPOLOGY.devices, 2))
    for req, t, row in one_hot_requests(batches):
        owner = int(placement.tables[t].shards[0].owner[row])
        if owner != req:
            expected[owner, int(owner // 3 != req // 3)] += dim * 4
    traffic = account(placement, batches, BATCH)
    np.testing.assert_array_equal(traffic.forward, expected)
    np.testing.assert_array_equal(traffic.backward.sum(0), expected.sum(0))


def test_row_wise_holds_torchrec_blocks():
    plan = create("row-wise").place(tables_of((10,)), Topology(2, 2))
    # ceil(10 / 4) = 3 rows a device: 3, 3, 3, 1 (TorchRec's row-wise shard sizes)
    assert [plan.holders(0, r)[0] for r in range(10)] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]


def test_table_row_wise_stays_within_one_host():
    plan = create("table-row-wise").place(tables_of((10, 10)), Topology(2, 2))
    hosts = [{plan.holders(t, r)[0] // 2 for r in range(10)} for t in range(2)]
    assert [len(h) for h in hosts] == [1, 1] and hosts[0] != hosts[1]


def test_flexshard_uses_no_more_memory_than_row_wise():
    sizes = (500, 60, 2000)
    batches = made_batches(sizes, 24 * 40, seed=5)
    tables = tables_of(sizes)
    stats = stats_of_batches(batches, sizes)
    flex = create("flexshard", batch_size=BATCH).place(tables, TOPOLOGY, stats)
    row_wise = create("row-wise").place(tables, TOPOLOGY)
    assert memory_use(flex).device.max() <= memory_use(row_wise).device.max()


def test_flexshard_with_headroom_cuts_inter_host_bytes():
    sizes = (500, 60, 2000)
    batches = made_batches(sizes, 24 * 40, seed=5)
    flex = account(placed("flexshard", tables_of(sizes), batches), batches, BATCH)
    rows = account(placed("row-wise", tables_of(sizes), batches), batches, BATCH)
    assert flex.bytes_per_tier()[1] < rows.bytes_per_tier()[1]


def test_recshard_keeps_each_table_on_one_device():
    sizes = (500, 60, 2000)
    batches = made_batches(sizes, 24 * 20, seed=6)
    plan = placed("recshard", tables_of(sizes), batches)
    for part in plan.tables:
        assert len(set(part.shards[0].owner.tolist())) == 1


def test_recshard_spills_to_host_memory_and_counts_its_reads():
    sizes = (50, 7, 200)
    tables = tables_of(sizes)
    batches = made_batches(sizes, 24 * 5, seed=2, max_len=2)
    tight = Topology(2, 3, device_memory_bytes=30 * 36, host_memory_bytes=1 << 30)
    stats = stats_of_batches(batches, sizes)
    plan = create("recshard").place(tables, tight, stats)
    assert memory_use(plan).host.sum() > 0
    assert memory_use(plan).device.max() <= tight.device_memory_bytes
    traffic = account(plan, batches, BATCH)
    assert traffic.host_memory_reads.sum() > 0
    assert_same(traffic, account_reference(plan, batches, BATCH))


def test_recshard_with_room_keeps_every_row_in_device_memory():
    sizes = (500, 60, 2000)
    batches = made_batches(sizes, 24 * 20, seed=6)
    plan = placed("recshard", tables_of(sizes), batches)
    assert memory_use(plan).host.sum() == 0
