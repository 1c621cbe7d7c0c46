"""The contract's value types: validation with the bad value named, and one numbering shared
with the kernels and every executor's series."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.contract import OracleWindow, PhaseSwitch, Read, RunPlan, Send, Series
from heraldbench.platform.counters import TALLY
from heraldbench.platform.data import InMemoryTrace
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.sim import SERIES, _kernels, _sync


def _trace() -> InMemoryTrace:
    return InMemoryTrace.from_local_ids(np.zeros((4, 1), np.int64), [1])


def test_run_plan_refuses_bad_values_naming_them() -> None:
    with pytest.raises(SpecError, match="'fifo'"):
        RunPlan(_trace(), cache_policy="fifo")
    with pytest.raises(SpecError, match="-1"):
        RunPlan(_trace(), replacement_window=-1)
    with pytest.raises(SpecError, match="0"):
        OracleWindow(lookahead=0, cleanup_interval=1)
    with pytest.raises(SpecError, match="-2"):
        OracleWindow(lookahead=3, cleanup_interval=-2)
    with pytest.raises(SpecError, match="cleanup interval 5 exceeds the lookahead 2"):
        OracleWindow(lookahead=2, cleanup_interval=5)  # a no-sync row would outlive its window


def test_only_a_plain_per_worker_plan_replays_the_trace() -> None:
    trace = _trace()
    assert RunPlan(trace).replays_trace
    assert RunPlan(trace, cache_policy="lfu", replacement_window=4).replays_trace
    assert not RunPlan(trace, replicated_rows=np.array([0], np.int32)).replays_trace
    assert not RunPlan(trace, oracle=OracleWindow(2, 1)).replays_trace


def test_phase_switch_costs() -> None:
    rows = np.array([3, 5, 8], np.int32)
    assert (PhaseSwitch(True, rows).pulls(4), PhaseSwitch(True, rows).pushes()) == (12, 0)
    assert (PhaseSwitch(False, rows).pulls(4), PhaseSwitch(False, rows).pushes()) == (0, 3)


def test_kernels_executors_and_series_share_the_contracts_numbering() -> None:
    assert (_kernels.TOUCH_HIT, _kernels.TOUCH_MISS, _kernels.TOUCH_UPDATE) == (
        Read.HIT, Read.MISS, Read.UPDATE)  # fmt: skip
    assert (_sync.SENT_EVICT, _sync.SENT_UPDATE, _sync.SENT_DIRECT) == (
        Send.EVICT, Send.UPDATE, Send.DIRECT)  # fmt: skip
    assert SERIES == tuple(column.key for column in Series)
    assert TALLY[: len(Series)] == SERIES
    assert SERIES[Series.UPDATE_PUSH] == "update_push"
