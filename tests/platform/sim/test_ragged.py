"""Ragged tables: a sample's pads are invisible to every scheduler.

The same ragged samples laid out with wider tables (more pads) give every scheduler the same
counts: working sets, HET's per-occurrence clocks, FAE's access counts, Herald's scores and
BagPipe's oracle all read the ids a sample reads, never its pads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from heraldbench.platform.data import InMemoryTrace, TableLayout
from heraldbench.platform.data.ragged import with_pads
from heraldbench.platform.exceptions import CapacityError
from heraldbench.platform.schedulers import create
from heraldbench.platform.sim import simulate
from tests.platform.strategies import small_ragged_simulations

#: Every scheduler family, with knobs that make each do its own work on tiny traces.
SCHEDULERS = {
    "naive": {}, "herald": {}, "herald-plus": {}, "het": {"bound": 1},
    "het-iteration": {"bound": 1, "clock_unit": "iteration"},
    "fae": {"hot_ratio": 0.3, "sampling_rate": 1.0}, "bagpipe": {"lookahead": 2},
}


def widened(trace: InMemoryTrace, extra: int) -> InMemoryTrace:
    """``trace`` with every ragged table ``extra`` columns wider: the same samples, more pads."""
    layout = trace.layout
    widths = tuple(w + (extra if r else 0) for w, r in zip(layout.table_widths, layout.ragged))
    wide = TableLayout(layout.names, layout.sizes, widths, (), layout.ragged)
    starts = np.cumsum((0, *layout.table_widths[:-1]))
    columns = [trace.ids[:, s:s + w] for s, w in zip(starts, layout.table_widths)]
    grown = [np.concatenate([c, np.repeat(c[:, -1:], w - c.shape[1], axis=1)], axis=1)
             for c, w in zip(columns, widths)]
    ids = with_pads(np.concatenate(grown, axis=1), trace.lengths, widths)
    return InMemoryTrace(ids, trace.labels, trace.dense, wide, lengths=trace.lengths)


def counts(trace: InMemoryTrace, name: str, kw: dict[str, Any], cache_rows: int) -> dict:
    """The run's counts; a refusal for capacity (BagPipe's cache holds a whole global batch's
    rows) is an outcome too, which pads must not change either."""
    knobs = dict(SCHEDULERS[name])
    kind = "het" if name.startswith("het") else name
    scheduler = create(kind, workers=kw["workers"], batch_size=kw["batch_size"], seed=kw["seed"],
                       **knobs)
    try:
        result = simulate(trace, scheduler, cache_rows=cache_rows, policy=kw["policy"],
                          check_invariants=True)
    except CapacityError as refused:
        return {"refused": str(refused)}
    return {**result.counts.as_dict(), "iterations": result.iterations}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_ragged_simulations(), st.sampled_from(sorted(SCHEDULERS)), st.integers(1, 3))
def test_more_pads_change_no_count(case: tuple[InMemoryTrace, dict[str, Any]], name: str,
                                   extra: int) -> None:
    trace, kw = case
    assume(trace.layout.is_ragged)
    wide = widened(trace, extra)
    cache_rows = max(kw["cache_rows"], kw["batch_size"] * wide.layout.ids_per_sample)
    assert counts(wide, name, kw, cache_rows) == counts(trace, name, kw, cache_rows), name
