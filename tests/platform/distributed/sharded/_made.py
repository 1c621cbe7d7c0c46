"""A tiny made trace with multi-hot (mean- and sum-pooled) and sequence features, every
placement on 2 hosts × 2 devices, and the plain float64 training they must all equal."""

from __future__ import annotations

from functools import cache

import torch

from heraldbench.platform.data import InMemoryTrace, TableLayout
from heraldbench.platform.data._features_spec import FeaturesSpec
from heraldbench.platform.data.features import with_features
from heraldbench.platform.placements import (
    Placement,
    Topology,
    access_stats,
    create,
    registered,
    tables_of,
)
from heraldbench.platform.train import split_trace, train_plain
from tests.platform.train._tiny import DIM, SETTINGS, tiny_trace

FEATURES = FeaturesSpec(multi_hot={"sizes": [2, 1, 3, 1], "pooling": "mean"},
                        sequence={"user": "C1", "item": "C2", "length": 3})
TOPOLOGY = Topology(hosts=2, devices_per_host=2)
BATCH = 8  # samples per device per iteration
#: Knobs that make each placement show its kind on tiny tables: column shards of unequal
#: widths, and flexshard with room to replicate rows on every host and every device.
KNOBS = {"column-wise": {"shard_dim": 3},
         "flexshard": {"memory_headroom": 1.0, "batch_size": BATCH * TOPOLOGY.devices}}
KINDS = sorted(registered())


@cache
def split():
    base = tiny_trace(samples=1_600)
    named = InMemoryTrace(base.ids, base.labels, base.dense,
                          TableLayout(("C1", "C2", "C3", "C4"), base.layout.sizes))
    featured = with_features(named, FEATURES).materialize()
    assert featured.layout.table_poolings == ("mean", "sum", "mean", "sum", "sequence")
    return split_trace(featured, SETTINGS.eval_fraction)


@cache
def plain():
    train, held_out = split()
    return train_plain(train, held_out, global_batch=BATCH * TOPOLOGY.devices,
                       embedding_dim=DIM, settings=SETTINGS, dtype=torch.float64)


@cache
def placement(kind: str) -> Placement:
    """``kind`` on the trace's tables, 8 bytes a value (float64: measured equals counted)."""
    train, _ = split()
    tables = tables_of(train, DIM, bytes_per_value=8)
    return create(kind, **KNOBS.get(kind, {})).place(tables, TOPOLOGY, access_stats(train))


def max_difference(outcome, reference) -> float:
    """The largest difference of any dense parameter or embedding value."""
    dense = max(float((a - b).abs().max()) for a, b in zip(
        outcome.model.state_dict().values(), reference.model.state_dict().values(), strict=True))
    return max(dense, float((outcome.table - reference.table).abs().max()))
