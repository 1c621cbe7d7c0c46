"""A profile's attribute tables: fitted from the sets a log's samples read, generated back."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from heraldbench.platform.data.attributes import AttributeMap
from heraldbench.platform.data.ragged import length_law, read_stream
from heraldbench.platform.data.workload import load_profile, profile_trace, save_profile
from heraldbench.platform.data.workload.attributes import (
    AttributeProfile,
    GeneratedAttribute,
    fit_attribute,
)
from heraldbench.platform.exceptions import ProfileError


def _shares(source, parents: np.ndarray) -> np.ndarray:
    ids, lengths = source.sets(parents)
    read = read_stream(ids, lengths[:, None], (source.width,))
    return np.bincount(read, minlength=source.rows) / read.size


def _real_sets(parents: int, rows: int, seed: int) -> AttributeMap:
    """Sets of 1..3 rows over skewed rows, as a movie file would give them."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, rows + 1) ** 1.2
    ids = np.zeros((parents, 3), np.int64)
    lengths = rng.choice([1, 2, 3], parents, p=[0.5, 0.35, 0.15])
    for p in range(parents):
        its = np.sort(rng.choice(rows, lengths[p], replace=False, p=weights / weights.sum()))
        ids[p] = np.append(its, [its[-1]] * (3 - lengths[p]))
    return AttributeMap("genre", "item", rows, ids, lengths)


def test_a_generated_set_is_a_function_of_seed_and_parent() -> None:
    profile = AttributeProfile(name="genre", parent="item", lengths=[0.5, 0.3, 0.2],
                               weights=[0.4, 0.3, 0.2, 0.1])
    parents = np.array([7, 3, 7, 1_000, 3])
    ids, lengths = GeneratedAttribute(profile, seed=5).sets(parents)
    again, _ = GeneratedAttribute(profile, seed=5).sets(parents[::-1])
    assert (ids == again[::-1]).all()
    assert (ids[0] == ids[2]).all() and (ids[1] == ids[4]).all()
    other, _ = GeneratedAttribute(profile, seed=6).sets(np.arange(200))
    assert (other != GeneratedAttribute(profile, seed=5).sets(np.arange(200))[0]).any()
    for row, size in zip(ids, lengths, strict=True):  # distinct, ascending, padded
        real = row[:size]
        assert (np.diff(real) > 0).all() and (row[size:] == real[-1]).all()


def test_the_fitted_laws_come_back_from_generation() -> None:
    real = _real_sets(parents=400, rows=12, seed=1)
    reads = np.random.default_rng(2).zipf(1.4, 50_000) % 400  # hot parents read more often
    profile = fit_attribute(real, reads, seed=0)
    assert len(profile.weights) == 12 and len(profile.lengths) == 3
    made = GeneratedAttribute(profile, seed=3)
    parents = np.arange(1 << 16)
    _, lengths = made.sets(parents)
    real_ids, real_lengths = real.sets(reads)
    assert np.abs(length_law(lengths, 3) - length_law(real_lengths, 3)).max() < 0.01
    target = np.bincount(read_stream(real_ids, real_lengths[:, None], (3,)), minlength=12)
    assert np.abs(_shares(made, parents) - target / target.sum()).max() < 0.01


def test_the_refined_weights_correct_drawing_without_repeats() -> None:
    """Big sets over few rows: weights equal to the shares take the heaviest row too rarely."""
    ids = np.array([[0, 1, 2], [0, 1, 3], [0, 2, 2], [3, 3, 3], [0, 4, 4], [1, 4, 4]])
    real = AttributeMap("genre", "item", 5, ids, np.array([3, 3, 2, 1, 2, 2]))
    reads = np.arange(6_000) % 6
    target = _shares(real, reads)
    profile = fit_attribute(real, reads)
    naive = profile.model_copy(update={"weights": target.tolist()})
    parents = np.arange(1 << 16)
    miss = np.abs(_shares(GeneratedAttribute(naive, 0), parents) - target).max()
    fitted = np.abs(_shares(GeneratedAttribute(profile, 0), parents) - target).max()
    assert miss > 0.02 and fitted < 0.005


def test_a_profile_with_an_attribute_generates_and_saves_it(tmp_path) -> None:
    base = load_profile(_builtin("movielens-100k"))
    attribute = AttributeProfile(name="genre", parent="item", lengths=[0.6, 0.4],
                                 weights=[0.5, 0.25, 0.25])
    profile = base.model_copy(update={"attributes": [attribute]})
    trace = profile_trace(profile, samples=2_000, seed=1)
    assert trace.layout.names[-1] == "genre" and trace.layout.ragged[-1]
    whole = trace.materialize()
    item, genre = trace.layout.names.index("item"), trace.layout.num_tables - 1
    first = {}
    for sample in range(2_000):  # the same item reads the same genres every time
        key = int(whole.ids[sample, item])
        row = whole.ids[sample, -2:].tolist()
        assert first.setdefault(key, row) == row
    assert set(np.unique(whole.lengths[:, genre])) == {1, 2}
    path = save_profile(profile, tmp_path / "p.yaml")
    assert load_profile(path).attributes == [attribute]
    assert load_profile(path).version == 3  # a reader must know attributes
    plain = save_profile(base, tmp_path / "plain.yaml")
    assert "attributes" not in plain.read_text() and load_profile(plain).version == 2


@pytest.mark.parametrize(("change", "message"), [
    ({"parent": "nobody"}, "no field named 'nobody'"),
    ({"name": "user"}, "'user' is already a table"),
])
def test_a_profile_attribute_must_fit_the_fields(tmp_path, change, message) -> None:
    base = load_profile(_builtin("movielens-100k"))
    attribute = {"name": "genre", "parent": "item", "lengths": [1.0], "weights": [1.0]} | change
    document = base.model_dump(mode="json") | {"attributes": [attribute]}
    path = tmp_path / "bad.yaml"
    import yaml

    path.write_text(yaml.safe_dump(document))
    with pytest.raises(ProfileError, match=message):
        load_profile(path)


def test_a_set_larger_than_the_readable_rows_is_refused() -> None:
    with pytest.raises(ValidationError, match="cannot be drawn without repeats from 2 rows"):
        AttributeProfile(name="g", parent="item", lengths=[0.2, 0.3, 0.5],
                         weights=[0.5, 0.5, 0.0])


def _builtin(name: str):
    from heraldbench.platform.data.workload.trace import builtin_profile_path

    return builtin_profile_path(name)


def test_the_first_rows_read_the_fitted_law_whatever_the_seed() -> None:
    """A profile's hottest rows are its first ones: their sizes alone follow the law."""
    law = [0.3, 0.39, 0.22, 0.07, 0.02]
    profile = AttributeProfile(name="genre", parent="item", lengths=law, weights=[0.2] * 5)
    for seed in range(10):
        _, lengths = GeneratedAttribute(profile, seed).sets(np.arange(64))
        made = np.cumsum(np.bincount(lengths, minlength=6)[1:] / 64)
        assert np.abs(made - np.cumsum(law)).max() < 0.05, seed


@pytest.mark.parametrize("features", [None, {"multi_hot": {"sizes": {"item": 3}}}])
def test_what_a_spec_tells_of_a_profile_with_attributes_is_what_it_reads(tmp_path,
                                                                          features) -> None:
    from heraldbench.platform.data.workload import SyntheticProfileSpec
    from heraldbench.platform.limits import trace_facts

    base = load_profile(_builtin("movielens-100k"))
    attribute = AttributeProfile(name="genre", parent="item", lengths=[0.5, 0.3, 0.2],
                                 weights=[0.4, 0.3, 0.2, 0.1])
    path = save_profile(base.model_copy(update={"attributes": [attribute]}), tmp_path / "p.yaml")
    spec = SyntheticProfileSpec(profile=str(path), samples=5_000, features=features)
    facts, layout = trace_facts(spec), spec.open().layout
    assert facts.tables == layout.ids_per_sample == (2 if features is None else 4) + 3
    assert facts.total_rows == layout.total_rows
    assert facts.table_rows == layout.sizes and layout.names[-1] == "genre"
    # a placement planned at submission from these tables, the attribute's included
    from heraldbench.platform.limits import check_runnable
    from heraldbench.platform.spec import parse_spec

    check_runnable(parse_spec({
        "name": "attributes", "dataset": spec.model_dump(mode="json"),
        "cluster": {"workers": 2, "batch_size": 64}, "cache": {"ratio": 0.5},
        "schedulers": [{"kind": "naive"}],
        "placements": [{"kind": "table-wise"}, {"kind": "row-wise"}], "baseline": "row-wise"}))


def _with_genre() -> object:
    base = load_profile(_builtin("movielens-100k"))
    attribute = AttributeProfile(name="genre", parent="item", lengths=[0.5, 0.3, 0.2],
                                 weights=[0.4, 0.3, 0.2, 0.1])
    return base.model_copy(update={"attributes": [attribute]})


def test_threads_reading_one_trace_at_once_read_the_same_sets() -> None:
    from concurrent.futures import ThreadPoolExecutor

    alone = profile_trace(_with_genre(), samples=60_000, seed=2).materialize()
    shared = profile_trace(_with_genre(), samples=60_000, seed=2)

    def read(_):
        return np.concatenate([c.ids for c in shared.chunks(997, ids_only=True)])

    with ThreadPoolExecutor(4) as pool:
        for ids in pool.map(read, range(4)):
            assert (ids == alone.ids).all()


def test_a_spilled_trace_with_attributes_keeps_its_lengths(tmp_path) -> None:
    from heraldbench.platform.data import SpilledTrace

    trace = profile_trace(_with_genre(), samples=5_000, seed=1)
    spilled = SpilledTrace(trace, str(tmp_path))
    for _ in spilled.chunks(1_000, ids_only=True):  # spills the ids
        pass
    whole = trace.materialize()
    again = spilled.materialize()
    assert (again.ids == whole.ids).all() and (again.lengths == whole.lengths).all()
    at = np.array([4_999, 3, 3])
    picked = spilled.samples_at(at)
    assert (picked.lengths == whole.lengths[at]).all() and (picked.labels == whole.labels[at]).all()
