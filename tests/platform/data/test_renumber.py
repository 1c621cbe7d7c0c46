"""First-seen renumbering: the simulator's view of a trace (same samples, rows renumbered)."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.data import FirstSeenTrace, InMemoryTrace, _renumber
from heraldbench.platform.data.synthetic import SyntheticCriteoSpec


def _trace() -> InMemoryTrace:
    local = np.array([[4, 9, 2], [1, 9, 0], [4, 3, 2], [0, 0, 1]])
    return InMemoryTrace.from_local_ids(local, [5, 10, 3])


def test_rows_are_numbered_per_table_in_order_of_first_appearance() -> None:
    renumbered = FirstSeenTrace(_trace()).materialize()
    # tables start at rows 0, 5 and 15; each table's rows get its lowest numbers as they appear
    assert renumbered.ids.tolist() == [[0, 5, 15], [1, 5, 16], [0, 6, 15], [2, 7, 17]]


def test_a_simulation_reads_the_same_renumbered_ids_without_labels() -> None:
    """A counting run asks for ids only; the renumbering passes that on to its source (the
    profile generator then skips labels and features) and numbers the rows the same way."""
    from heraldbench.platform.data.workload import SyntheticProfileSpec

    source = SyntheticProfileSpec(profile="criteo-kaggle", samples=2000, scale=0.001).open()
    whole = FirstSeenTrace(source).materialize()
    parts = list(FirstSeenTrace(source).chunks(300, ids_only=True))
    np.testing.assert_array_equal(np.concatenate([p.ids for p in parts]), whole.ids)
    assert all(p.labels.size == 0 for p in parts)


def test_samples_labels_dense_and_layout_are_unchanged() -> None:
    source = SyntheticCriteoSpec(samples=3000, scale=0.001, seed=4).open()
    original = source.materialize()
    renumbered = FirstSeenTrace(source).materialize()
    assert renumbered.layout == original.layout
    np.testing.assert_array_equal(renumbered.labels, original.labels)
    np.testing.assert_array_equal(renumbered.dense, original.dense)
    offsets, sizes = original.layout.offsets, np.asarray(original.layout.sizes)
    table = np.searchsorted(offsets, renumbered.ids, side="right") - 1
    assert (table == np.arange(original.layout.num_tables)).all()
    assert (renumbered.ids < (offsets + sizes)).all()


def test_the_renumbering_is_a_bijection_that_keeps_which_reads_share_a_row() -> None:
    source = SyntheticCriteoSpec(samples=3000, scale=0.001, seed=4).open()
    before = source.materialize().ids.ravel()
    after = FirstSeenTrace(source).materialize().ids.ravel()
    pairs = np.unique(np.stack([before, after]), axis=1)
    assert len(np.unique(pairs[0])) == len(np.unique(pairs[1])) == pairs.shape[1]


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_chunking_does_not_change_the_numbering(chunk: int) -> None:
    source = SyntheticCriteoSpec(samples=2500, scale=0.001, seed=2).open()
    whole = FirstSeenTrace(source).materialize().ids
    pieces = np.concatenate([c.ids for c in FirstSeenTrace(source).chunks(chunk)])
    np.testing.assert_array_equal(pieces, whole)


def test_every_pass_numbers_the_same_way() -> None:
    trace = FirstSeenTrace(SyntheticCriteoSpec(samples=1000, scale=0.001, seed=2).open())
    first = trace.materialize().ids
    np.testing.assert_array_equal(trace.materialize().ids, first)


def test_rows_named_on_the_original_trace_map_to_their_new_numbers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A scheduler that names rows before renumbering (FAE's hot set) finds them again; rows the
    pass has not reached yet are left out."""
    monkeypatch.setattr(_renumber, "_BLOCK_SAMPLES", 2)
    trace = FirstSeenTrace(_trace())
    assert trace.renumbered(np.array([4, 14])).size == 0  # no pass has started
    chunks = trace.chunks(2)
    next(chunks)  # samples 0 and 1: global rows 4, 1 | 14 | 17, 15
    assert trace.renumbered(np.array([4, 1, 3, 14, 8, 15])).tolist() == [0, 1, 5, 16]
    list(chunks)
    assert trace.renumbered(np.array([8, 0, 16])).tolist() == [6, 2, 17]
