"""Hypothesis strategies shared by the simulator's property tests."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from heraldbench.platform.data import InMemoryTrace, TableLayout
from heraldbench.platform.data.ragged import with_pads

__all__ = ["small_multi_hot_simulations", "small_ragged_simulations", "small_simulations"]


@st.composite
def small_simulations(draw: st.DrawFn) -> tuple[InMemoryTrace, dict[str, Any]]:
    """A small trace over tiny tables and the cluster and cache to simulate it with.

    Tables of 1-6 rows make rows repeat a lot, so co-writers, outdated copies, dirty evictions and
    pushes all happen; the cache holds at least one batch's ids (``batch_size × tables``).
    """
    workers = draw(st.integers(1, 4))
    batch_size = draw(st.integers(1, 4))
    fields = draw(st.integers(1, 3))
    sizes = draw(st.lists(st.integers(1, 6), min_size=fields, max_size=fields))
    global_batch = workers * batch_size
    samples = draw(st.integers(1, 12)) * global_batch + draw(st.integers(0, global_batch - 1))
    sample = st.tuples(*(st.integers(0, size - 1) for size in sizes))
    rows = draw(st.lists(sample, min_size=samples, max_size=samples))
    trace = InMemoryTrace.from_local_ids(np.array(rows, dtype=np.int64), sizes)
    least = batch_size * fields
    kw = {
        "workers": workers,
        "batch_size": batch_size,
        "cache_rows": draw(st.integers(least, max(least, sum(sizes) + 2))),
        "policy": draw(st.sampled_from(["lru", "lfu"])),
        "lookahead": draw(st.integers(1, 3)),
        "seed": draw(st.integers(0, 3)),
    }
    return trace, kw


@st.composite
def small_multi_hot_simulations(draw: st.DrawFn) -> tuple[InMemoryTrace, dict[str, Any]]:
    """:func:`small_simulations` with 1-3 ids per table per sample, so that one sample often
    reads a row twice; the cache holds at least one batch's ids (``batch_size × ids a sample``)."""
    trace, kw = draw(small_simulations())
    widths = tuple(draw(st.lists(st.integers(1, 3), min_size=trace.layout.num_tables,
                                 max_size=trace.layout.num_tables)))
    layout = TableLayout(trace.layout.names, trace.layout.sizes, widths)
    extra = np.asarray(draw(st.lists(st.integers(0, 5), min_size=layout.ids_per_sample,
                                     max_size=layout.ids_per_sample)))
    tables = layout.column_tables
    first = np.cumsum((0, *widths[:-1]))
    local = trace.ids[:, tables] - layout.offsets[tables]
    local = (local + extra * np.arange(trace.num_samples)[:, None]) % np.asarray(layout.sizes)[tables]
    local[:, first] = trace.ids - layout.offsets  # each table's first id is the one-hot one
    multi = InMemoryTrace(local + layout.offsets[tables], trace.labels, trace.dense, layout)
    least = kw["batch_size"] * layout.ids_per_sample
    kw["cache_rows"] = max(kw["cache_rows"], least)
    return multi, kw


@st.composite
def small_ragged_simulations(draw: st.DrawFn) -> tuple[InMemoryTrace, dict[str, Any]]:
    """:func:`small_multi_hot_simulations` whose wider tables are ragged: each sample reads
    between 1 and the width ids of such a table (the columns past them repeat its last id)."""
    multi, kw = draw(small_multi_hot_simulations())
    layout = multi.layout
    ragged = tuple(width > 1 and draw(st.booleans()) for width in layout.table_widths)
    if not any(ragged):
        return multi, kw
    layout = TableLayout(layout.names, layout.sizes, layout.widths, (), ragged)
    widths = np.asarray(layout.table_widths)
    drawn = np.asarray(draw(st.lists(st.integers(1, 3), min_size=multi.num_samples * len(widths),
                                     max_size=multi.num_samples * len(widths))))
    lengths = np.where(ragged, np.minimum(drawn.reshape(multi.num_samples, -1), widths), widths)
    ids = with_pads(multi.ids, lengths, layout.table_widths)
    return InMemoryTrace(ids, multi.labels, multi.dense, layout, lengths=lengths), kw
