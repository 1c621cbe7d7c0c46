"""A submission's check that a placement fits (``check_fits_any_trace``, made of the tables
alone) against placing on a trace's statistics: a run never fails on memory where the check
passed, and FlexShard's and RecShard's checks are exact on every trace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heraldbench.platform.exceptions import CapacityError
from heraldbench.platform.placements import (
    JaggedIds,
    Topology,
    create,
    memory_use,
    registered,
)
from heraldbench.platform.placements.runs import place_checked
from heraldbench.platform.placements.stats import stats_of_batches
from tests.platform.placements.test_accounting import made_batches, tables_of

KNOBS = {"flexshard": {"batch_size": 4, "memory_headroom": 1.0},
         "column-wise": {"shard_dim": 3}}
#: Placements whose check is exact whatever the trace: the statistics never change whether
#: they fit (row-wise and data-parallel read none).
EXACT = {"flexshard", "recshard", "row-wise", "data-parallel"}


def _fits_before(kind, tables, topology) -> bool:
    try:
        create(kind, **KNOBS.get(kind, {})).check_fits_any_trace(tables, topology)
    except CapacityError:
        return False
    return True


def _fits_placed(kind, tables, topology, stats):
    try:
        return place_checked(kind, KNOBS.get(kind, {}), tables, topology, stats)
    except CapacityError:
        return None


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(registered())),
       sizes=st.lists(st.integers(1, 400), min_size=1, max_size=5),
       max_len=st.sampled_from([1, 4]), seed=st.integers(0, 2**16),
       device_share=st.floats(0.05, 1.2), host_share=st.floats(0.0, 1.0))
def test_a_run_never_fails_on_memory_where_the_check_passed(kind, sizes, max_len, seed,
                                                            device_share, host_share) -> None:
    tables = tables_of(tuple(sizes))
    total = sum(t.rows * t.row_bytes(t.dim) for t in tables)
    topology = Topology(2, 2, device_memory_bytes=max(1, int(total * device_share)),
                        host_memory_bytes=max(1, int(total * host_share)))
    stats = stats_of_batches(made_batches(tuple(sizes), 64, seed, max_len=max_len),
                             tuple(sizes))
    before, placed = _fits_before(kind, tables, topology), _fits_placed(kind, tables,
                                                                        topology, stats)
    if before:
        assert placed is not None
        _, use = placed
        assert use.device.max() <= topology.device_memory_bytes
        assert use.host.max() <= topology.host_memory_bytes
    if kind in EXACT or max_len == 1:  # one id a sample: every table's lookups weigh alike
        assert before == (placed is not None)


def test_recshard_is_refused_before_the_trace_where_no_table_layout_fits() -> None:
    """Host memory takes nearly nothing, so each table sits whole on one device, and the
    largest table is above a device's memory although the even share is not."""
    tables = tables_of((500, 60, 2000))
    largest = 2000 * tables[0].row_bytes(8)
    topology = Topology(2, 2, device_memory_bytes=largest - 1, host_memory_bytes=64)
    with pytest.raises(CapacityError, match="recshard finds no placement"):
        create("recshard").check_fits_any_trace(tables, topology)
    roomy = Topology(2, 2, device_memory_bytes=largest, host_memory_bytes=64)
    create("recshard").check_fits_any_trace(tables, roomy)


def test_flexshard_replicates_less_rather_than_exceed_a_device() -> None:
    """With headroom its budget is above row-wise's fullest device; a device's memory caps
    it, and rows are demoted until the plan fits."""
    sizes = (500, 60, 2000)
    tables = tables_of(sizes)
    roomy = Topology(2, 2, device_memory_bytes=1 << 30)
    row_wise = int(memory_use(create("row-wise").place(tables, roomy)).device.max())
    tight = Topology(2, 2, device_memory_bytes=row_wise)
    stats = stats_of_batches(made_batches(sizes, 64, 3), sizes)
    flex = create("flexshard", batch_size=4, memory_headroom=1.0)
    assert memory_use(flex.place(tables, roomy, stats)).device.max() > row_wise
    assert memory_use(flex.place(tables, tight, stats)).device.max() <= row_wise


def test_a_greedy_plan_that_misses_memory_falls_back_to_the_tables_alone() -> None:
    """Balanced by lookups, table-wise spreads the four hot small tables over both devices
    first, and the large cold one then fits on neither; balanced by width alone (table order,
    the submission's plan) the large one goes first and everything fits."""
    sizes = (300, 100, 100, 100, 100)
    tables = tables_of(sizes)
    topology = Topology(1, 2, device_memory_bytes=400 * tables[0].row_bytes(8))
    lengths = np.array([[1] * 8] + [[4] * 8] * 4, np.int32)
    values = np.concatenate([np.arange(8)] + [np.arange(32)] * 4).astype(np.int32)
    stats = stats_of_batches([JaggedIds(lengths, values)], sizes)
    algorithm = create("table-wise")
    with pytest.raises(CapacityError, match="fits on no device"):
        algorithm.place(tables, topology, stats)
    algorithm.check_fits_any_trace(tables, topology)  # the submission passes
    plan, use = place_checked("table-wise", {}, tables, topology, stats)  # and so does the run
    assert plan.tables[0].shards[0].owner[0] != plan.tables[1].shards[0].owner[0]
    assert use.device.max() <= topology.device_memory_bytes
    assert plan.fallback.startswith("the plan balanced by the trace's lookups does not fit")
    roomy = Topology(1, 2, device_memory_bytes=800 * tables[0].row_bytes(8))
    assert place_checked("table-wise", {}, tables, roomy, stats)[0].fallback is None


def test_recshard_out_of_time_before_any_plan_places_by_the_check_s_program() -> None:
    """A solve stopped before it found any plan falls back to the program without an
    objective, so a spec the submission's check passed is placed, not failed."""
    sizes = tuple(range(100, 2100, 100))
    tables = tables_of(sizes)
    total = sum(t.rows * t.row_bytes(t.dim) for t in tables)
    topology = Topology(2, 4, device_memory_bytes=int(total / 8 * 0.6))
    stats = stats_of_batches(made_batches(sizes, 200, 1), sizes)
    hurried = create("recshard", time_limit_s=1e-6)  # HiGHS stops before its first plan
    hurried.check_fits_any_trace(tables, topology)
    _, use = place_checked("recshard", {"time_limit_s": 1e-6}, tables, topology, stats)
    assert use.device.max() <= topology.device_memory_bytes
    assert use.host.sum() > 0  # capacity-constrained: part of the tables is in host memory
