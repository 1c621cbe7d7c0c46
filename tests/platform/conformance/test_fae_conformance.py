"""FAE against its released profiler: the golden fixtures (no released code needed), bad input,
and, with ``HERALDBENCH_FAE_REF`` naming a checkout, the released code itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from heraldbench.platform.conformance import fae
from heraldbench.platform.conformance._checkout import trace_ids
from heraldbench.platform.conformance._fae_bagpipe_fixtures import (
    argsort_probe,
    fae_result,
    trace_fingerprint,
)
from heraldbench.platform.conformance._report import ConformanceError
from heraldbench.platform.schedulers.fae_profile import released_access_counts
from heraldbench.platform.spec import parse_spec

FIXTURES = Path(__file__).parent / "fixtures"
FAE_FIXTURES = sorted(FIXTURES.glob("fae_*.json"))
REFERENCE = os.environ.get("HERALDBENCH_FAE_REF")

SMALL = {"name": "fae-check", "cluster": {"workers": 4, "batch_size": 16},
         "dataset": {"kind": "synthetic", "profile": "criteo-kaggle", "samples": 3000,
                     "scale": 0.0005, "seed": 2},
         "schedulers": [{"kind": "fae", "hot_ratio": 0.05}]}  # fmt: skip


def test_there_are_fixtures_with_and_without_ties() -> None:
    ties = {json.loads(path.read_text())["ties_at_threshold"] for path in FAE_FIXTURES}
    assert ties == {True, False}


@pytest.mark.parametrize("path", FAE_FIXTURES, ids=lambda p: p.stem)
def test_released_variant_reproduces_the_released_profiler(path: Path) -> None:
    fixture = json.loads(path.read_text())
    spec = parse_spec(fixture["spec"])
    trace = spec.dataset.open()
    assert trace_fingerprint(trace_ids(trace, limit=None)) == fixture["trace_sha256"], (
        "the generated trace changed: make the fixtures again (see the file's 'regenerate')"
    )
    entry = spec.schedulers[0]
    assert entry.variant == "released"
    released = fae_result(fixture)
    report = fae._report("fixture", fixture["released"]["commit"], spec, trace, entry, released)
    probe = fixture["argsort_probe"]
    same_sort = argsort_probe(probe["size"]) == probe["sha256"]
    if same_sort or not fixture["ties_at_threshold"]:
        assert report.agrees, report.differences
        assert report.totals["hot rows"] == (len(fixture["hot_rows"]),) * 2
        return
    # This CPU orders equal counts differently from the one that made the fixture: only the
    # rows above the threshold count, and the sizes, are the released code's on every machine.
    counts, _ = released_access_counts(trace, entry.sampling_percent, spec.seed)
    ours = report.totals
    threshold = counts[released["hot_rows"]].min()
    above = released["hot_rows"][counts[released["hot_rows"]] > threshold]
    assert ours["hot rows"] == (len(fixture["hot_rows"]),) * 2
    assert ours["sampled samples"] == (fixture["sampled"],) * 2
    assert len(above) <= ours["hot rows in common"][0]


@pytest.mark.parametrize("path", [Path("/nonexistent/fae"), None], ids=["missing", "empty"])
def test_a_path_that_is_not_a_checkout_is_named(path: Path | None, tmp_path: Path) -> None:
    where = path or tmp_path
    with pytest.raises(ConformanceError, match=str(where)) as caught:
        fae.check_reference(where)
    assert "DLRM/dlrm_input_profiler.py" in str(caught.value) or "not a folder" in str(caught.value)


def test_a_git_checkout_reports_its_commit(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _fake_checkout(tmp_path, "raise SystemExit('not run')\n")
    assert fae.check_reference(tmp_path) is None  # not a git work tree
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    assert fae.check_reference(tmp_path) == head.stdout.strip()


def test_a_sampling_rate_that_is_no_whole_percent_names_the_field(tmp_path: Path) -> None:
    _fake_checkout(tmp_path, "raise SystemExit('not run')\n")
    data = {**SMALL, "schedulers": [{"kind": "fae", "sampling_rate": 0.025}]}
    spec = parse_spec(data)
    for variant in ("normative", "released"):
        with pytest.raises(ConformanceError, match="sampling_rate"):
            fae.compare(tmp_path, spec, spec.dataset.open(), variant=variant,
                        cache_dir=tmp_path / "cache")  # fmt: skip


def test_a_failing_profiler_is_reported_and_leaves_no_cache(tmp_path: Path) -> None:
    checkout, cache = tmp_path / "ref", tmp_path / "cache"
    _fake_checkout(checkout, "print('reading the trace'); raise RuntimeError('no Criteo here')\n")
    spec = parse_spec(SMALL)
    with pytest.raises(ConformanceError, match="no Criteo here"):
        fae.compare(checkout, spec, spec.dataset.open(), variant="released", cache_dir=cache)
    assert not cache.exists() or not any(cache.iterdir())


@pytest.mark.skipif(REFERENCE is None, reason="set HERALDBENCH_FAE_REF to an FAE checkout")
def test_the_released_profiler_agrees_with_the_released_variant(tmp_path: Path) -> None:
    spec = parse_spec(SMALL)
    trace = spec.dataset.open()
    report = fae.compare(Path(REFERENCE), spec, trace, variant="released", cache_dir=tmp_path)
    assert report.agrees, report.differences
    normative = fae.compare(Path(REFERENCE), spec, trace, variant="normative", cache_dir=tmp_path)
    assert normative.differences and all(d.explanation for d in normative.differences)
    assert any(p.name.startswith("fae-") for p in tmp_path.iterdir())  # the cached result


def _fake_checkout(folder: Path, body: str) -> None:
    script = folder / fae.PROFILER
    script.parent.mkdir(parents=True)
    script.write_text(body)


def test_fixture_ids_are_the_traces_rows() -> None:
    # Fixtures hold ids of heraldbench's generated traces, never more than the trace's rows.
    for path in FAE_FIXTURES:
        fixture = json.loads(path.read_text())
        rows = parse_spec(fixture["spec"]).dataset.open().layout.total_rows
        assert np.max(fixture["hot_rows"]) < rows
