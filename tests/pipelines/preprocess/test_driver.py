"""Preprocessing on a real LocalCluster gives exactly the raw readers' traces; skips done work."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from heraldbench.pipelines.preprocess import preprocess
from heraldbench.platform.data.avazu import AvazuCSVSpec
from heraldbench.platform.data.criteo import CriteoTSVSpec
from heraldbench.platform.data.movielens import MovieLensSpec
from heraldbench.platform.data.prepared import MANIFEST, POPULARITY, PreparedSpec
from heraldbench.platform.exceptions import TraceFormatError
from heraldbench.platform.runner import simulate_run
from heraldbench.platform.schedulers import HeraldSpec, NaiveSpec
from heraldbench.platform.spec import parse_spec
from tests.pipelines.preprocess import rawfiles

#: Small parts, so that even small files are cut into many pieces.
PART = 8000


def _cases(tmp: Path) -> dict[str, object]:
    return {
        "criteo": CriteoTSVSpec(path=rawfiles.criteo(tmp / "day_0", 400)),
        "criteo-malformed-skip-threshold-budget": CriteoTSVSpec(
            path=rawfiles.criteo(tmp / "bad.tsv", 400, seed=1, malformed=0.05),
            on_malformed="skip",
            frequency_threshold=3,
            max_samples=300,
            labelled=True,
        ),
        "avazu-threshold": AvazuCSVSpec(
            path=rawfiles.avazu(tmp / "train.csv", 300), frequency_threshold=2
        ),
        "movielens-csv": MovieLensSpec(path=rawfiles.movielens(tmp / "ratings.csv", 500)),
        "movielens-dat-by-time": MovieLensSpec(
            path=rawfiles.movielens(tmp / "ratings.dat", 500, layout="dat"), sort_by_time=True
        ),
        "movielens-u.data-by-time-budget": MovieLensSpec(
            path=rawfiles.movielens(tmp / "u.data", 500, layout="u.data"),
            sort_by_time=True,
            max_samples=123,
        ),
    }


def assert_same_trace(raw_spec, folder: Path) -> None:
    expected = raw_spec.open()
    prepared = PreparedSpec(path=folder).open()
    got = prepared.materialize()
    assert prepared.layout == expected.layout
    np.testing.assert_array_equal(got.ids, expected.ids)
    np.testing.assert_array_equal(got.labels, expected.labels)
    np.testing.assert_array_equal(got.dense, expected.dense)
    facts = prepared.describe()
    for key in ("malformed_skipped", "malformed_lines", "malformed_reasons", "rare_rows_mapped"):
        assert facts[key] == expected.describe()[key], key


@pytest.mark.parametrize(
    "case",
    [
        "criteo",
        "criteo-malformed-skip-threshold-budget",
        "avazu-threshold",
        "movielens-csv",
        "movielens-dat-by-time",
        "movielens-u.data-by-time-budget",
    ],
)
def test_shards_give_exactly_the_raw_readers_trace(case, tmp_path, client) -> None:
    raw_spec = _cases(tmp_path)[case]
    result = preprocess(raw_spec, tmp_path / "prepared", client=client, part_bytes=PART)
    assert result.shards > 1 and not result.up_to_date
    assert_same_trace(raw_spec, tmp_path / "prepared")


@pytest.mark.parametrize("case", ["criteo", "avazu-threshold", "movielens-dat-by-time"])
def test_simulating_the_shards_counts_what_the_raw_file_counts(case, tmp_path, client) -> None:
    raw_spec = _cases(tmp_path)[case]
    preprocess(raw_spec, tmp_path / "prepared", client=client, part_bytes=PART)
    counts = {}
    for name, dataset in (
        ("raw", raw_spec),
        ("prepared", PreparedSpec(path=tmp_path / "prepared")),
    ):
        spec = parse_spec(
            {
                "name": "roundtrip",
                "dataset": dataset.model_dump(),
                "cluster": {"workers": 2, "batch_size": 4},
                "cache": {"rows": 120},
                "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
            }
        )
        counts[name] = [simulate_run(spec, s).counts for s in (NaiveSpec(), HeraldSpec())]
    assert counts["prepared"] == counts["raw"]
    assert counts["raw"][0].lookups > 0


def test_popularity_and_vocabularies_describe_every_row(tmp_path, client) -> None:
    raw_spec = CriteoTSVSpec(path=rawfiles.criteo(tmp_path / "day_0", 300), frequency_threshold=2)
    preprocess(raw_spec, tmp_path / "p", client=client, part_bytes=PART)
    trace = PreparedSpec(path=tmp_path / "p").open()
    popularity = np.load(tmp_path / "p" / POPULARITY)
    ids = trace.materialize().ids
    np.testing.assert_array_equal(popularity, np.bincount(ids.ravel(), minlength=len(popularity)))
    assert len(popularity) == trace.layout.total_rows


def test_a_gzip_file_and_several_day_files(tmp_path, client) -> None:
    day0 = rawfiles.criteo(tmp_path / "day_0", 200, seed=3)
    day1 = rawfiles.criteo(tmp_path / "day_1", 150, seed=4)
    with gzip.open(tmp_path / "day_1.gz", "wb") as stream:
        stream.write(day1.read_bytes())
    both = tmp_path / "both.tsv"
    both.write_bytes(day0.read_bytes() + day1.read_bytes())
    preprocess(
        CriteoTSVSpec(path=day0),
        tmp_path / "p",
        client=client,
        part_bytes=PART,
        inputs=[day0, tmp_path / "day_1.gz"],
    )
    assert_same_trace(CriteoTSVSpec(path=both), tmp_path / "p")


def test_a_malformed_line_fails_as_in_the_raw_reader(tmp_path, client) -> None:
    raw_spec = CriteoTSVSpec(path=rawfiles.criteo(tmp_path / "bad.tsv", 300, malformed=0.05))
    with pytest.raises(TraceFormatError) as expected:
        raw_spec.open()
    with pytest.raises(TraceFormatError) as got:
        preprocess(raw_spec, tmp_path / "p", client=client, part_bytes=PART)
    assert str(got.value) == str(expected.value)


def test_rerunning_skips_work_already_done(tmp_path, client) -> None:
    raw_spec = AvazuCSVSpec(path=rawfiles.avazu(tmp_path / "train.csv", 300))
    out = tmp_path / "p"
    first = preprocess(raw_spec, out, client=client, part_bytes=PART, keep_work=True)
    shards = sorted((out / "shards").iterdir())
    stamps = [p.stat().st_mtime_ns for p in shards]

    again = preprocess(raw_spec, out, client=client, part_bytes=PART, keep_work=True)
    assert again.up_to_date and again.stages == {}
    assert [p.stat().st_mtime_ns for p in shards] == stamps

    # An interrupted run: the manifest and one shard are missing; only that shard is redone.
    (out / MANIFEST).unlink()
    shards[1].unlink()
    resumed = preprocess(raw_spec, out, client=client, part_bytes=PART)
    assert resumed.stages["shards"] == {"run": 1, "reused": len(shards) - 1}
    for stage in ("parse", "count", "vocab", "map"):
        assert resumed.stages[stage]["run"] == 0, stage
    assert resumed.samples == first.samples
    assert not (out / "_work").exists()
    assert_same_trace(raw_spec, out)


def test_changed_inputs_are_prepared_again(tmp_path, client) -> None:
    path = rawfiles.movielens(tmp_path / "ratings.csv", 100)
    preprocess(MovieLensSpec(path=path), tmp_path / "p", client=client, part_bytes=PART)
    rawfiles.movielens(path, 140, seed=9)
    result = preprocess(MovieLensSpec(path=path), tmp_path / "p", client=client, part_bytes=PART)
    assert not result.up_to_date and result.samples == 140
    assert json.loads((tmp_path / "p" / MANIFEST).read_text())["samples"] == 140
    assert_same_trace(MovieLensSpec(path=path), tmp_path / "p")
