"""Surgery rearranges one structure of a trace and keeps what it says it keeps."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.data.workload import ProfileTrace
from heraldbench.platform.data.workload import _structure as st
from heraldbench.platform.data.workload.fit import HEAD_MIN, ROOT_LEVELS
from heraldbench.platform.data.workload.surgery import WINDOW, surgeries
from tests.platform.data.workload.planted import BLOCKS, planted_profile


@pytest.fixture(scope="module")
def planted():
    trace = ProfileTrace(planted_profile(), samples=6000, seed=5).materialize()
    local = (trace.ids - trace.layout.offsets).astype(np.int64)
    names = list(trace.layout.names)
    blocks = [[names.index(field) for field in block] for block in BLOCKS]
    structure = st.read_structure(local, blocks, HEAD_MIN, ROOT_LEVELS)
    return local, structure, surgeries(local, structure, np.random.default_rng(0))


def _sorted_columns(ids: np.ndarray) -> np.ndarray:
    return np.sort(ids, axis=0)


def _rows(ids: np.ndarray) -> np.ndarray:
    """The rows of ``ids`` as a multiset (sorted), to compare regardless of order."""
    return ids[np.lexsort(ids.T[::-1])] if len(ids) else ids


def test_every_surgery_keeps_each_rows_access_count(planted) -> None:
    local, _, altered = planted
    assert set(altered) == {"heads apart", "heads together", f"heads in {WINDOW}",
                            "entities' fields apart", "heads and entities' fields apart",
                            "fields apart"}  # fmt: skip
    for name, ids in altered.items():
        assert ids.shape == local.shape, name
        assert np.array_equal(_sorted_columns(ids), _sorted_columns(local)), name


def test_head_surgeries_move_head_tuples_only(planted) -> None:
    local, s, altered = planted
    heads = s.classes == st.HEAD
    for name in ("heads apart", "heads together", f"heads in {WINDOW}"):
        changed = False
        for k, fields in enumerate(s.blocks):
            entity = ~heads[:, k]
            assert np.array_equal(altered[name][entity][:, fields], local[entity][:, fields]), name
            changed |= not np.array_equal(altered[name][heads[:, k]][:, fields],
                                          local[heads[:, k]][:, fields])  # fmt: skip
        assert changed, name


def _combinations(ids: np.ndarray, s: st.Structure, heads: np.ndarray) -> dict[int, np.ndarray]:
    """Per pattern of blocks drawing head tuples (two blocks or more), its samples' head values."""
    pattern = heads @ (1 << np.arange(heads.shape[1]))
    found = {}
    for p in np.unique(pattern):
        fields = [f for k, fs in enumerate(s.blocks) if (p >> k) & 1 for f in fs]
        if int(p).bit_count() >= 2:
            found[int(p)] = _rows(ids[pattern == p][:, fields])
    return found


def test_heads_together_keeps_each_samples_combination_and_apart_does_not(planted) -> None:
    local, s, altered = planted
    heads = s.classes == st.HEAD
    real = _combinations(local, s, heads)
    together = _combinations(altered["heads together"], s, heads)
    apart = _combinations(altered["heads apart"], s, heads)
    assert real and all(np.array_equal(together[p], real[p]) for p in real)
    assert not all(np.array_equal(apart[p], real[p]) for p in real)
    pattern = heads @ (1 << np.arange(heads.shape[1]))
    moved = (altered["heads together"] != local).any(axis=1)
    assert moved[np.isin(pattern, list(real))].mean() > 0.5  # most samples did move


def test_heads_in_a_window_stay_in_their_window(planted) -> None:
    local, _, altered = planted
    moved = altered[f"heads in {WINDOW}"]
    for start in range(0, len(local), WINDOW):
        window = slice(start, start + WINDOW)
        assert np.array_equal(_sorted_columns(moved[window]), _sorted_columns(local[window]))


def test_entities_recur_alike_with_their_fields_recombined(planted) -> None:
    local, s, altered = planted
    heads = s.classes == st.HEAD
    mixed = altered["entities' fields apart"]
    recombined = 0
    for k, fields in enumerate(s.blocks):
        assert np.array_equal(mixed[heads[:, k]][:, fields], local[heads[:, k]][:, fields])
        at = np.flatnonzero(~heads[:, k])
        _, first, inverse = np.unique(s.tuples[at, k], return_index=True, return_inverse=True)
        # every occurrence of an entity carries the values its first occurrence now has
        assert np.array_equal(mixed[at][:, fields], mixed[at[first]][:, fields][inverse.ravel()])
        if len(fields) > 1:  # most entities are combinations the original never had
            original = {tuple(row) for row in local[at][:, fields]}
            made = [tuple(row) in original for row in mixed[at[first]][:, fields]]
            assert np.mean(made) < 0.5
            recombined += 1
    assert recombined >= 2


def test_surgery_is_deterministic_per_seed(planted) -> None:
    local, s, altered = planted
    again = surgeries(local, s, np.random.default_rng(0))
    assert all(np.array_equal(again[name], ids) for name, ids in altered.items())


def test_real_head_combinations_give_each_sample_one_real_samples_head_tuples(planted) -> None:
    from heraldbench.platform.data.workload.surgery import real_head_combinations

    local, s, _ = planted
    real = local + 5000  # the real trace's own ids: only the rank spaces map them to the profile's
    real_s = st.read_structure(real, s.blocks, s.head_min, ROOT_LEVELS)
    real_heads = real_s.classes == st.HEAD
    ranks = st.head_values(real, real_s)
    synthetic = local[::-1].copy()  # another trace of the same blocks: the planted one reversed
    synthetic_heads = (s.classes == st.HEAD)[::-1]
    mixed = real_head_combinations(synthetic, synthetic_heads, real, real_heads, s.blocks, ranks,
                                   np.random.default_rng(3))  # fmt: skip
    mapped = np.stack([[ranks[f].get(int(v), -1) for v in column]
                       for f, column in enumerate(real.T)], axis=1)  # fmt: skip
    changed_blocks = [(mixed[:, fields] != synthetic[:, fields]).any(axis=1) for fields in s.blocks]
    for k, fields in enumerate(s.blocks):
        assert not changed_blocks[k][~synthetic_heads[:, k]].any()  # only head draws change
    changed = np.flatnonzero(np.any(changed_blocks, axis=0))
    assert changed.size > len(local) // 10
    for t in changed:  # every changed head tuple of a sample comes from one real sample's heads
        cols = [f for k, fields in enumerate(s.blocks) if changed_blocks[k][t] for f in fields]
        donors = (mapped[:, cols] == mixed[t, cols]).all(axis=1)
        blocks = [k for k in range(len(s.blocks)) if changed_blocks[k][t]]
        assert (donors & real_heads[:, blocks].all(axis=1)).any(), t
