"""Attribute tables: a parent row's set appended to every sample that reads the row."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.data import FeaturesSpec, InMemoryTrace, TableLayout, with_features
from heraldbench.platform.data.attributes import (
    AttributeMap,
    AttributeTrace,
    split_attributes,
    with_attributes,
)
from heraldbench.platform.exceptions import DataError, SpecError

#: Three parent rows' sets over 4 attribute rows: {2}, {0, 3}, {1, 2, 3}.
SETS = AttributeMap("tag", "item", 4, np.array([[2, 2, 2], [0, 3, 3], [1, 2, 3]]),
                    np.array([1, 2, 3]))


def _base(names: tuple[str, str] = ("user", "item")) -> InMemoryTrace:
    """6 samples of a user (5 rows) and an item (3 rows)."""
    local = np.array([[0, 0], [1, 2], [2, 1], [3, 2], [4, 0], [0, 1]])
    return InMemoryTrace(local + [0, 5], np.arange(6) % 2, np.zeros((6, 0)),
                         TableLayout(names, (5, 3)))


def test_each_sample_reads_its_items_set_after_the_other_tables() -> None:
    trace = with_attributes(_base(), [SETS])
    assert trace.layout.names == ("user", "item", "tag")
    assert trace.layout.table_widths[-1] == 3 and trace.layout.ragged[-1]
    whole = trace.materialize()  # checks lengths and pads
    first = 5 + 3
    assert whole.ids[1].tolist() == [1, 5 + 2, first + 1, first + 2, first + 3]
    assert whole.ids[0].tolist()[2:] == [first + 2] * 3  # one id, padded by repeating it
    assert whole.lengths[:, -1].tolist() == [1, 3, 2, 3, 1, 2]
    assert whole.labels.tolist() == _base().labels.tolist()


def test_the_parent_is_named_by_table() -> None:
    base = _base(("C1", "C2"))
    renamed = AttributeMap("tag", "C2", 4, SETS.ids, SETS.lengths)
    trace = with_attributes(base, [renamed])
    assert trace.materialize().lengths[:, -1].tolist() == [1, 3, 2, 3, 1, 2]
    with pytest.raises(SpecError, match="no parent table 'item'"):
        with_attributes(base, [SETS])
    clash = AttributeMap("C1", "C2", 4, SETS.ids, SETS.lengths)
    with pytest.raises(SpecError, match="already a table"):
        with_attributes(base, [clash])


def test_random_access_reads_what_the_stream_reads() -> None:
    trace = with_attributes(_base(), [SETS])
    whole = trace.materialize()
    at = np.array([5, 1, 1, 3])
    picked = trace.samples_at(at)
    assert (picked.ids == whole.ids[at]).all() and (picked.lengths == whole.lengths[at]).all()


def test_a_set_is_checked_when_it_is_read() -> None:
    with pytest.raises(DataError, match="1..2"):
        AttributeMap("tag", "C2", 4, np.zeros((3, 2)), np.array([1, 0, 2]))
    with pytest.raises(DataError, match="outside its 4 rows"):
        AttributeMap("tag", "C2", 4, np.full((3, 2), 4), np.array([1, 1, 2]))


def test_features_are_made_under_the_attribute_tables() -> None:
    features = FeaturesSpec.model_validate({"multi_hot": {"sizes": [1, 2]}})
    made = with_features(with_attributes(_base(), [SETS]), features)
    assert isinstance(made, AttributeTrace)
    assert made.layout.names[-1] == "tag" and made.layout.table_widths == (1, 2, 3)
    under, sources = split_attributes(made)
    alone = with_features(_base(), features).materialize()
    whole = made.materialize()
    assert (whole.ids[:, :3] == alone.ids).all()
    # the widened item's first column is still the sample's own item: the same sets
    assert whole.lengths[:, -1].tolist() == [1, 3, 2, 3, 1, 2]
    assert sources == [SETS] and under.layout.table_widths == (1, 2)


def test_a_set_s_pads_repeat_its_last_id() -> None:
    with pytest.raises(DataError, match="must repeat its last id"):
        AttributeMap("tag", "item", 4, np.array([[2, 1, 1], [0, 3, 0]]), np.array([1, 2]))
