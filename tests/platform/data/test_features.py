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


def test_a_ragged_history_holds_the_users_previous_items_up_to_its_length() -> None:
    log, length, shortest = user_item_log(), 5, 2
    trace = with_features(log, FeaturesSpec(sequence={"user": "user", "item": "item",
                                                      "length": length, "min_length": shortest}))
    made = next(trace.chunks(trace.num_samples))
    expected, past = [], defaultdict(lambda: deque(maxlen=length))
    history_offset = log.layout.total_rows
    for user, item in log.ids:
        if len(past[user]) >= shortest:
            expected.append([h - log.layout.offsets[1] + history_offset for h in past[user]])
        past[user].append(item)
    assert trace.layout.ragged == (False, False, True)
    assert trace.describe()["ragged_tables"] == ["history"]
    assert trace.num_samples == len(expected) == len(made)
    assert made.lengths[:, :2].tolist() == [[1, 1]] * len(expected)
    assert made.lengths[:, 2].tolist() == [len(h) for h in expected]
    assert {shortest, length} <= set(made.lengths[:, 2].tolist())
    for row, history in zip(made.ids[:, 2:].tolist(), expected):
        assert row == history + [history[-1]] * (length - len(history))  # pads repeat the last


def test_uniform_multi_hot_lengths_are_a_fixed_function_of_the_id() -> None:
    spec = SyntheticCriteoSpec(samples=2_000, scale=0.001,
                               features={"multi_hot": {"sizes": {"C3": 4}, "lengths": "uniform"}})
    trace = spec.open()
    chunk = next(trace.chunks(trace.num_samples))
    first, lengths = chunk.ids[:, 2], chunk.lengths[:, 2]
    assert set(lengths.tolist()) == {1, 2, 3, 4}
    by_id = {}
    for k, n in zip(first.tolist(), lengths.tolist()):
        assert by_id.setdefault(k, n) == n
    fixed = SyntheticCriteoSpec(samples=2_000, scale=0.001,
                                features={"multi_hot": {"sizes": {"C3": 4}}}).open()
    widened = next(fixed.chunks(trace.num_samples)).ids[:, 2:6]
    real = np.arange(4)[None, :] < lengths[:, None]
    assert (chunk.ids[:, 2:6][real] == widened[real]).all()  # the same ids, fewer of them


def test_a_ragged_trace_replays_and_spills_with_its_lengths(tmp_path) -> None:
    from heraldbench.platform.data import SpilledTrace

    trace = with_features(user_item_log(), FeaturesSpec(sequence={
        "user": "user", "item": "item", "length": 6, "min_length": 1}))
    whole = next(trace.chunks(10_000))
    pieces = list(trace.chunks(37, ids_only=True))
    assert (np.concatenate([c.lengths for c in pieces]) == whole.lengths).all()
    spilled = SpilledTrace(trace, str(tmp_path))
    list(spilled.chunks(500, ids_only=True))  # the first read spills
    assert spilled.describe()["spilled"]
    again = next(spilled.chunks(10_000, ids_only=True))
    assert (again.ids == whole.ids).all() and (again.lengths == whole.lengths).all()
    positions = np.array([5, 3, 400, 3])
    picked = spilled.id_samples_at(positions)
    assert (picked.lengths == whole.lengths[positions]).all()
    assert (picked.ids == whole.ids[positions]).all()


def test_lengths_that_do_not_fit_the_layout_are_refused() -> None:
    from heraldbench.platform.exceptions import DataError

    layout = TableLayout(("a", "b"), (5, 5), (1, 3), (), (False, True))
    ids = np.array([[0, 5, 6, 6]])
    with pytest.raises(DataError, match="outside 1..3"):
        InMemoryTrace(ids, np.zeros(1), np.zeros((1, 0)), layout, lengths=np.array([[1, 4]]))
    with pytest.raises(DataError, match="does not repeat"):
        InMemoryTrace(ids, np.zeros(1), np.zeros((1, 0)), layout, lengths=np.array([[1, 1]]))
    with pytest.raises(DataError, match="needs each sample's lengths"):
        InMemoryTrace(ids, np.zeros(1), np.zeros((1, 0)), layout)
    assert InMemoryTrace(ids, np.zeros(1), np.zeros((1, 0)), layout,
                         lengths=np.array([[1, 2]])).lengths.tolist() == [[1, 2]]


def test_min_length_beyond_length_is_refused() -> None:
    with pytest.raises(ValueError, match="min_length 7 exceeds length 5"):
        FeaturesSpec(sequence={"user": "u", "item": "i", "length": 5, "min_length": 7})
