"""The built-in criteo-kaggle profile: where it comes from, and that it keeps what it promises."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.platform.data.synthetic import KAGGLE_CARDINALITIES, KAGGLE_SAMPLES
from heraldbench.platform.data.workload import BUILTIN_PROFILES, ProfileTrace, resolve_profile
from heraldbench.platform.data.workload.model import table_sizes


@pytest.fixture(scope="module")
def profile():
    return resolve_profile("criteo-kaggle")


def test_it_is_built_in_with_its_provenance(profile) -> None:
    assert "criteo-kaggle" in BUILTIN_PROFILES
    assert profile.reference_samples == KAGGLE_SAMPLES
    assert profile.labels.click_rate == pytest.approx(0.256)
    assert "Criteo Kaggle" in profile.provenance.source and profile.provenance.samples_read > 0
    assert any("Heaps" in a for a in profile.assumptions)
    assert [f.name for f in profile.fields] == [f"C{i + 1}" for i in range(26)]


def test_at_full_scale_tables_reach_the_published_cardinalities(profile) -> None:
    sizes = np.array(table_sizes(profile, KAGGLE_SAMPLES))
    cards = np.array(KAGGLE_CARDINALITIES)
    assert np.all(sizes >= cards) and np.all(sizes <= cards * 1.01 + 3)


def test_a_miniature_keeps_the_published_proportions(profile) -> None:
    """At scale s, s x 45.8 M samples end with tables of s x the published sizes; the clicks
    are the published rate."""
    scale = 0.001
    trace = ProfileTrace(profile, samples=int(scale * KAGGLE_SAMPLES), scale=scale, seed=2)
    assert trace.layout.total_rows == pytest.approx(scale * sum(KAGGLE_CARDINALITIES), rel=0.15)
    data = trace.materialize()
    assert data.labels.mean() == pytest.approx(0.256, abs=0.02)
    rows = len(np.unique(data.ids))
    assert rows > 0.6 * scale * sum(KAGGLE_CARDINALITIES)  # most rows are touched by the end
