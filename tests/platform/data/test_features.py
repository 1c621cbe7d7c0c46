"""Multi-hot and sequence features made on a one-hot trace: what a user relies on of them."""

from __future__ import annotations

from collections import defaultdict, deque

import numpy as np
import pytest

from heraldbench.platform.data import (
    MLPERF_MULTI_HOT_SIZES,
    FeaturesSpec,
    InMemoryTrace,
    TableLayout,
)
from heraldbench.platform.data.features import with_features
from heraldbench.platform.data.synthetic import SyntheticCriteoSpec
from heraldbench.platform.exceptions import SpecError


def user_item_log(samples: int = 3_000, users: int = 40, items: int = 300,
                  seed: int = 0) -> InMemoryTrace:
    rng = np.random.default_rng(seed)
    local = np.stack([rng.integers(0, users, samples), rng.zipf(1.4, samples) % items], axis=1)
    dense = rng.random((samples, 2)).astype(np.float32)
    labels = (rng.random(samples) < 0.3).astype(np.float32)
    trace = InMemoryTrace.from_local_ids(local, [users, items], labels=labels, dense=dense)
    return InMemoryTrace(trace.ids, labels, dense, TableLayout(("user", "item"), (users, items)))


def sequence(trace: InMemoryTrace, length: int):
    return with_features(trace, FeaturesSpec(sequence={"user": "user", "item": "item",
                                                      "length": length}))


def test_mlperf_multi_hot_widens_criteo_tables_by_mlperf_sizes() -> None:
    spec = SyntheticCriteoSpec(samples=1_000, scale=0.001, features={"multi_hot": {}})
    base = SyntheticCriteoSpec(samples=1_000, scale=0.001).open()
    trace = spec.open()
    assert trace.layout.table_widths == MLPERF_MULTI_HOT_SIZES
    ids = next(trace.chunks(1_000)).ids
    one_hot = next(base.chunks(1_000)).ids
    firsts = np.cumsum((0, *MLPERF_MULTI_HOT_SIZES[:-1]))
    assert (ids[:, firsts] == one_hot).all()  # each table's first id is the sample's own
    tables = trace.layout.column_tables
    local = ids - trace.layout.offsets[tables]
    assert (local >= 0).all() and (local < np.asarray(trace.layout.sizes)[tables]).all()


def test_the_same_id_always_brings_the_same_extra_ids() -> None:
    trace = SyntheticCriteoSpec(samples=4_000, scale=0.001,
                                features={"multi_hot": {"sizes": "mlperf"}}).open()
    ids = next(trace.chunks(4_000)).ids
    start = int(np.sum(MLPERF_MULTI_HOT_SIZES[:20]))  # C21: 100 ids a sample
    block = ids[:, start:start + 100]
    seen: dict[int, tuple[int, ...]] = {}
    for row in block:
        assert seen.setdefault(int(row[0]), tuple(row)) == tuple(row)
    assert len(seen) < len(block)  # the table repeats ids, so the check compared something


def test_pareto_extra_ids_crowd_the_tables_first_rows() -> None:
    def extra_share_low(distribution: str) -> float:
        trace = SyntheticCriteoSpec(samples=2_000, scale=0.01, features={
            "multi_hot": {"sizes": "mlperf", "distribution": distribution}}).open()
        ids = next(trace.chunks(2_000)).ids
        start = int(np.sum(MLPERF_MULTI_HOT_SIZES[:20]))
        local = ids[:, start + 1:start + 100] - trace.layout.offsets[20]
        return float(np.mean(local < 100))

    assert extra_share_low("pareto") > 0.5 > extra_share_low("uniform")


def test_a_history_is_the_users_previous_items_oldest_first() -> None:
    log, length = user_item_log(), 5
    trace = sequence(log, length)
    made = next(trace.chunks(trace.num_samples))
    expected_ids, kept, past = [], [], defaultdict(lambda: deque(maxlen=length))
    item_rows, history_offset = log.layout.sizes[1], log.layout.total_rows
    for i, (user, item) in enumerate(log.ids):
        if len(past[user]) == length:
            kept.append(i)
            history = [h - log.layout.offsets[1] + history_offset for h in past[user]]
            expected_ids.append([user, item, *history])
        past[user].append(item)
    assert trace.layout.names == ("user", "item", "history")
    assert trace.layout.sizes == (40, 300, item_rows)
    assert trace.layout.table_poolings == ("sum", "sum", "sequence")
    assert trace.num_samples == len(kept)
    assert (made.ids == np.array(expected_ids)).all()
    assert (made.labels == log.labels[kept]).all() and (made.dense == log.dense[kept]).all()


def test_a_sequence_trace_replays_the_same_whatever_the_chunking() -> None:
    trace = sequence(user_item_log(), 8)
    whole = np.concatenate([c.ids for c in trace.chunks(10_000)])
    pieces = np.concatenate([c.ids for c in trace.chunks(37, ids_only=True)])
    assert (whole == pieces).all()


@pytest.mark.parametrize(("features", "message"), [
    ({"multi_hot": {"sizes": [2, 3]}}, "gives 2 sizes for the dataset's 26 tables"),
    ({"multi_hot": {"sizes": {"C99": 4}}}, "no table named 'C99'"),
    ({"sequence": {"user": "C1", "item": "nope", "length": 3}}, "sequence.item: no table named"),
])
def test_features_that_do_not_fit_the_tables_name_the_field(features, message) -> None:
    with pytest.raises(SpecError, match=message):
        SyntheticCriteoSpec(samples=100, scale=0.001, features=features).open()


def test_a_one_hot_spec_reads_and_stores_as_before() -> None:
    spec = SyntheticCriteoSpec(samples=100, scale=0.001)
    assert "features" not in spec.model_dump(mode="json")
    assert spec.open().layout.one_hot
