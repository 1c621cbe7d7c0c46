"""BagPipe against its released oracle: the golden fixtures (no released code needed), bad
input, and, with ``HERALDBENCH_BAGPIPE_REF`` naming a checkout, the released code itself."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from heraldbench.platform.conformance import bagpipe
from heraldbench.platform.conformance._bagpipe_sets import QUANTITIES
from heraldbench.platform.conformance._fae_bagpipe_fixtures import bagpipe_result, trace_fingerprint
from heraldbench.platform.conformance._checkout import trace_ids
from heraldbench.platform.conformance._report import ConformanceError
from heraldbench.platform.spec import parse_spec

FIXTURES = Path(__file__).parent / "fixtures"
BAGPIPE_FIXTURES = sorted(FIXTURES.glob("bagpipe_*.json"))
REFERENCE = os.environ.get("HERALDBENCH_BAGPIPE_REF")

SMALL = {"name": "bagpipe-check", "cluster": {"workers": 4, "batch_size": 8},
         "dataset": {"kind": "synthetic", "profile": "criteo-kaggle", "samples": 800,
                     "scale": 0.0005, "seed": 2},
         "cache": {"ratio": 0.05},
         "schedulers": [{"kind": "bagpipe", "lookahead": 5}]}  # fmt: skip


def _fixture_report(path: Path, variant: str = "released"):
    fixture = json.loads(path.read_text())
    spec = parse_spec(fixture["spec"])
    trace = spec.dataset.open()
    assert trace_fingerprint(trace_ids(trace, limit=None)) == fixture["trace_sha256"], (
        "the generated trace changed: make the fixtures again (see the file's 'regenerate')"
    )
    scheduler = bagpipe._scheduler(spec, variant)
    return fixture, bagpipe._report("fixture", fixture["released"]["commit"], spec, trace,
                                    scheduler, bagpipe_result(fixture))  # fmt: skip


@pytest.mark.parametrize("path", BAGPIPE_FIXTURES, ids=lambda p: p.stem)
def test_released_variant_reproduces_the_released_oracle_batch_by_batch(path: Path) -> None:
    fixture, report = _fixture_report(path)
    assert report.agrees, report.differences
    assert report.iterations == len(fixture["batches"]) > 0
    # Every quantity was compared, and the sets were not all empty.
    sizes = report.totals
    assert all(sizes[name.replace("_", " ")][0] > 0 for name in QUANTITIES)


def test_the_normative_variant_differs_where_the_released_oracle_is_known_to() -> None:
    fixture, report = _fixture_report(BAGPIPE_FIXTURES[0], "normative")
    batches = report.totals["iterations"]
    assert batches[0] == batches[1] + fixture["spec"]["schedulers"][0]["lookahead"]
    whats = {d.what for d in report.differences}
    assert {"iterations", "partition"} <= whats
    assert all(d.explanation for d in report.differences)
    # The sync classes are the window's, whatever the partition and capacity.
    assert not whats & {"sync now", "sync later", "no sync"}


@pytest.mark.parametrize("path", [Path("/nonexistent/bagpipe"), None], ids=["missing", "empty"])
def test_a_path_that_is_not_a_checkout_is_named(path: Path | None, tmp_path: Path) -> None:
    where = path or tmp_path
    with pytest.raises(ConformanceError, match=str(where)) as caught:
        bagpipe.check_reference(where)
    assert "BagPipe/oraclecacher.py" in str(caught.value) or "not a folder" in str(caught.value)


@pytest.mark.parametrize(
    ("lookahead", "message"),
    [(25, "dataset.samples gives 25 global batches.*lookahead 25"), (1, "lookahead >= 2")],
    ids=["window-longer-than-the-trace", "one-batch-window"],
)
def test_a_setting_the_released_oracle_cannot_take_names_its_field(
    lookahead: int, message: str, tmp_path: Path
) -> None:
    _fake_checkout(tmp_path, "raise RuntimeError('not run')\n")
    spec = parse_spec({**SMALL, "schedulers": [{"kind": "bagpipe", "lookahead": lookahead}]})
    with pytest.raises(ConformanceError, match=message):
        bagpipe.compare(tmp_path, spec, spec.dataset.open(), variant="released",
                        cache_dir=tmp_path / "cache")  # fmt: skip
    assert not (tmp_path / "cache").exists()


def test_a_failing_oracle_is_reported_and_leaves_no_cache(tmp_path: Path) -> None:
    checkout, cache = tmp_path / "ref", tmp_path / "cache"
    _fake_checkout(checkout, "raise ImportError('torch.distributed.rpc is unavailable')\n")
    spec = parse_spec(SMALL)
    with pytest.raises(ConformanceError, match="rpc is unavailable"):
        bagpipe.compare(checkout, spec, spec.dataset.open(), variant="released", cache_dir=cache)
    assert not cache.exists() or not any(cache.iterdir())


@pytest.mark.skipif(REFERENCE is None, reason="set HERALDBENCH_BAGPIPE_REF to a BagPipe checkout")
def test_the_released_oracle_agrees_with_the_released_variant(tmp_path: Path) -> None:
    spec = parse_spec(SMALL)
    trace = spec.dataset.open()
    report = bagpipe.compare(Path(REFERENCE), spec, trace, variant="released", cache_dir=tmp_path)
    assert report.agrees, report.differences
    assert report.iterations == 800 // 32 - 5
    normative = bagpipe.compare(Path(REFERENCE), spec, trace, variant="normative",
                                cache_dir=tmp_path)  # fmt: skip
    assert normative.differences and all(d.explanation for d in normative.differences)


def _fake_checkout(folder: Path, oracle: str) -> None:
    package = folder / "BagPipe"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "load_csv.py").write_text("")
    (package / "oraclecacher.py").write_text(oracle)
