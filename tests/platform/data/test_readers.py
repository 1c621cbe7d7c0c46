"""Readers of the raw public formats: Criteo TSV, Avazu CSV, MovieLens ratings.

Expected ids are written out by hand for the fixtures (first-seen order per table, row 0 the
missing value, row 1 the rare row when a threshold above 1 is set) and, for Criteo, checked
against an independent pure-Python reference as well.
"""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from heraldbench.platform.data import _vocab
from heraldbench.platform.data._vocab import TableVocab, encode_column
from heraldbench.platform.data.avazu import AvazuCSVSpec
from heraldbench.platform.data.criteo import CriteoTSVSpec
from heraldbench.platform.data.movielens import MovieLensSpec
from heraldbench.platform.exceptions import DataError, TraceFormatError

FIXTURES = Path(__file__).parent / "fixtures"
CRITEO_TRAIN = FIXTURES / "criteo_train.tsv"
CRITEO_TEST = FIXTURES / "criteo_test.tsv"
CRITEO_MALFORMED = FIXTURES / "criteo_malformed.tsv"
AVAZU_TRAIN = FIXTURES / "avazu_train.csv"
AVAZU_TEST = FIXTURES / "avazu_test.csv"


def local_ids(trace, table: str) -> list[int]:
    """Per-table local ids of one column of a trace."""
    f = trace.layout.names.index(table)
    return (trace.ids[:, f] - trace.layout.offsets[f]).tolist()


def table_size(trace, table: str) -> int:
    return trace.layout.sizes[trace.layout.names.index(table)]


def reference_criteo_ids(path: Path, threshold: int = 0) -> tuple[np.ndarray, list[int]]:
    """Local ids by a plain-Python reading of a clean labelled Criteo file."""
    rows = [line.split("\t")[14:] for line in path.read_text().splitlines()]
    columns = [[row[f].lower() for row in rows] for f in range(26)]
    ids, sizes = [], []
    for values in columns:
        counts = Counter(v for v in values if v)
        first_row = 2 if threshold > 1 else 1
        row_of: dict[str, int] = {}
        for v in values:
            if v and v not in row_of and counts[v] >= max(threshold, 1):
                row_of[v] = first_row + len(row_of)
        ids.append([0 if not v else row_of.get(v, 1) for v in values])
        sizes.append(first_row + len(row_of))
    return np.array(ids).T, sizes


# --- Criteo ------------------------------------------------------------------------------------


def test_criteo_labelled_ids_labels_and_dense() -> None:
    trace = CriteoTSVSpec(path=CRITEO_TRAIN).open()

    assert trace.layout.names == tuple(f"C{i}" for i in range(1, 27))
    assert trace.labels.tolist() == [0, 0, 0, 1]
    assert local_ids(trace, "C1") == [1, 1, 2, 1]  # 68fd1e64, 68fd1e64, 287e684f, 68FD1E64
    assert local_ids(trace, "C5") == [1, 1, 1, 2]
    assert local_ids(trace, "C8") == [1, 2, 2, 1]
    assert local_ids(trace, "C26") == [1, 2, 0, 1]  # line 3 has C26 empty
    assert table_size(trace, "C1") == 3
    assert table_size(trace, "C9") == 2  # missing row + a73ee510
    expected_dense_0 = [1, 1, 5, 0, 1382, 4, 15, 2, 181, 1, 2, 0, 2]  # I12 empty -> 0
    np.testing.assert_allclose(trace.dense[0], np.log1p(expected_dense_0), rtol=1e-6)
    expected_dense_3 = [0, 0, 0, 0, 8020, 26, 6, 0, 80, 0, 2, 0, 0]  # empty -> 0, -1 -> 0
    np.testing.assert_allclose(trace.dense[3], np.log1p(expected_dense_3), rtol=1e-6)
    assert trace.dense.dtype == np.float32 and trace.ids.dtype == np.int32
    assert trace.info["kind"] == "criteo-tsv" and trace.info["labelled"] is True
    assert trace.info["malformed_skipped"] == 0


def test_criteo_matches_reference_and_ids_are_contiguous() -> None:
    trace = CriteoTSVSpec(path=CRITEO_TRAIN).open()
    expected, sizes = reference_criteo_ids(CRITEO_TRAIN)

    assert list(trace.layout.sizes) == sizes
    np.testing.assert_array_equal(trace.ids - trace.layout.offsets, expected)
    for f, size in enumerate(trace.layout.sizes):
        used_value_rows = set(local_ids(trace, f"C{f + 1}")) - {0}
        assert used_value_rows == set(range(1, size))  # no gaps, no unused value rows


def test_same_raw_value_gets_same_global_id_and_tables_do_not_overlap() -> None:
    trace = CriteoTSVSpec(path=CRITEO_TRAIN).open()

    # Lines 1 and 4 differ only in C5, and in the case of C1's hash (68fd1e64 / 68FD1E64).
    differs = np.flatnonzero(trace.ids[0] != trace.ids[3])
    assert differs.tolist() == [4]
    assert trace.ids[1, 0] == trace.ids[0, 0]  # 68fd1e64 on lines 1 and 2
    starts, ends = trace.layout.offsets, trace.layout.offsets + np.array(trace.layout.sizes)
    assert ((trace.ids >= starts) & (trace.ids < ends)).all()


def test_missing_value_has_its_own_row() -> None:
    trace = CriteoTSVSpec(path=CRITEO_TRAIN).open()

    assert local_ids(trace, "C22") == [0, 0, 1, 0]  # only line 3 has a C22 value
    assert local_ids(trace, "C19") == [1, 1, 0, 1]
    assert trace.info["missing_row"] == 0 and trace.info["rare_row"] is None


def test_frequency_threshold_folds_rare_values_into_one_row() -> None:
    trace = CriteoTSVSpec(path=CRITEO_TRAIN, frequency_threshold=2).open()
    expected, sizes = reference_criteo_ids(CRITEO_TRAIN, threshold=2)

    assert local_ids(trace, "C1") == [2, 2, 1, 2]  # 287e684f seen once -> rare row 1
    assert local_ids(trace, "C8") == [2, 3, 3, 2]  # both values seen twice
    assert local_ids(trace, "C22") == [0, 0, 1, 0]
    assert table_size(trace, "C22") == 2  # missing + rare, no frequent value
    np.testing.assert_array_equal(trace.ids - trace.layout.offsets, expected)
    assert list(trace.layout.sizes) == sizes
    singletons = sum(
        sum(1 for c in Counter(col[col != 0]).values() if c == 1)
        for col in reference_criteo_ids(CRITEO_TRAIN)[0].T
    )
    assert trace.info["rare_rows_mapped"] == singletons > 0
    assert trace.info["rare_row"] == 1


def test_threshold_one_keeps_every_value() -> None:
    plain = CriteoTSVSpec(path=CRITEO_TRAIN).open()
    one = CriteoTSVSpec(path=CRITEO_TRAIN, frequency_threshold=1).open()

    np.testing.assert_array_equal(plain.ids, one.ids)


def test_malformed_line_error_names_file_and_line() -> None:
    with pytest.raises(TraceFormatError) as caught:
        CriteoTSVSpec(path=CRITEO_MALFORMED).open()

    assert caught.value.path == str(CRITEO_MALFORMED) and caught.value.line == 2
    assert str(caught.value) == f"{CRITEO_MALFORMED}:2: expected 40 tab-separated fields, found 38"


def test_skip_mode_counts_and_lists_malformed_lines() -> None:
    trace = CriteoTSVSpec(path=CRITEO_MALFORMED, on_malformed="skip").open()

    assert trace.num_samples == 3
    assert trace.info["malformed_skipped"] == 4
    assert trace.info["malformed_lines"] == [2, 3, 5, 6]
    assert trace.info["malformed_reasons"] == [
        "expected 40 tab-separated fields, found 38",
        "dense I3 is not an integer: '1.5'",
        "C7 is not a hex hash: 'zzzz0000'",
        "label is not 0 or 1: '2'",
    ]
    assert local_ids(trace, "C1") == [1, 1, 2]  # kept lines 1, 4, 7
    assert local_ids(trace, "C7") == [1, 2, 3]  # 'zzzz0000' got no row


def test_malformed_lines_after_max_samples_are_not_read() -> None:
    assert CriteoTSVSpec(path=CRITEO_MALFORMED, max_samples=1).open().num_samples == 1
    with pytest.raises(TraceFormatError, match=r":2: "):
        CriteoTSVSpec(path=CRITEO_MALFORMED, max_samples=2).open()
    skipping = CriteoTSVSpec(path=CRITEO_MALFORMED, max_samples=2, on_malformed="skip").open()
    assert skipping.info["malformed_lines"] == [2, 3]


def test_a_malformed_line_right_after_the_budget_is_not_read(tmp_path: Path) -> None:
    # The budget ends with the block's last well-formed line; what follows is never looked at,
    # whatever the block size (the chunked preprocessing relies on this).
    lines = CRITEO_TRAIN.read_text().splitlines()[:2] + ["not a criteo line"]
    path = tmp_path / "budget.tsv"
    path.write_text("\n".join(lines) + "\n")
    assert CriteoTSVSpec(path=path, max_samples=2).open().num_samples == 2


def test_unlabelled_layout_is_detected() -> None:
    trace = CriteoTSVSpec(path=CRITEO_TEST).open()
    train = CriteoTSVSpec(path=CRITEO_TRAIN, max_samples=3).open()

    assert trace.info["labelled"] is False
    assert trace.labels.tolist() == [0, 0, 0]
    np.testing.assert_array_equal(trace.ids, train.ids)
    np.testing.assert_array_equal(trace.dense, train.dense)


@pytest.mark.parametrize(
    ("path", "labelled", "found"), [(CRITEO_TEST, True, 39), (CRITEO_TRAIN, False, 40)]
)
def test_forced_layout_rejects_the_other(path: Path, labelled: bool, found: int) -> None:
    with pytest.raises(TraceFormatError, match=rf":1: expected {79 - found} tab.*found {found}"):
        CriteoTSVSpec(path=path, labelled=labelled).open()


def test_unknown_field_count_cannot_be_detected(tmp_path: Path) -> None:
    path = tmp_path / "odd.tsv"
    path.write_text("0\t1\t2\n")
    with pytest.raises(TraceFormatError, match=r"odd.tsv:1: expected 40 .* or 39 .* found 3"):
        CriteoTSVSpec(path=path).open()


@pytest.mark.parametrize("name", ["train.tsv.gz", "train_without_suffix"])
def test_gzip_is_read_transparently(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(gzip.compress(CRITEO_TRAIN.read_bytes()))

    plain, packed = CriteoTSVSpec(path=CRITEO_TRAIN).open(), CriteoTSVSpec(path=path).open()

    np.testing.assert_array_equal(packed.ids, plain.ids)
    np.testing.assert_array_equal(packed.labels, plain.labels)
    np.testing.assert_array_equal(packed.dense, plain.dense)


def test_max_samples_reads_only_the_first_lines() -> None:
    trace = CriteoTSVSpec(path=CRITEO_TRAIN, max_samples=2).open()

    assert trace.num_samples == 2 and trace.labels.tolist() == [0, 0]
    assert table_size(trace, "C1") == 2  # missing + 68fd1e64; line 3's value unseen
    assert trace.info["samples"] == 2


@pytest.mark.parametrize("ending", ["crlf", "no-final-newline"])
def test_line_endings(tmp_path: Path, ending: str) -> None:
    text = CRITEO_TRAIN.read_text()
    text = text.replace("\n", "\r\n") if ending == "crlf" else text.rstrip("\n")
    path = tmp_path / "train.tsv"
    path.write_bytes(text.encode())

    np.testing.assert_array_equal(
        CriteoTSVSpec(path=path).open().ids, CriteoTSVSpec(path=CRITEO_TRAIN).open().ids
    )


def test_lone_carriage_return_is_malformed(tmp_path: Path) -> None:
    lines = CRITEO_TRAIN.read_text().splitlines()
    lines[2] = lines[2].replace("287e684f", "287e\r684f")
    path = tmp_path / "cr.tsv"
    path.write_bytes(("\n".join(lines) + "\n").encode())

    with pytest.raises(TraceFormatError, match=r":3: carriage return"):
        CriteoTSVSpec(path=path).open()
    assert CriteoTSVSpec(path=path, on_malformed="skip").open().info["malformed_lines"] == [3]


def test_empty_line_is_malformed(tmp_path: Path) -> None:
    lines = CRITEO_TEST.read_text().splitlines()
    path = tmp_path / "test.tsv"
    path.write_text("\n".join([lines[0], "", lines[1]]) + "\n")

    with pytest.raises(TraceFormatError, match=r":2: expected 39 tab-separated fields, found 1"):
        CriteoTSVSpec(path=path).open()
    assert CriteoTSVSpec(path=path, on_malformed="skip").open().num_samples == 2


def test_results_do_not_depend_on_block_size(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = CriteoTSVSpec(path=CRITEO_MALFORMED, on_malformed="skip").open()
    monkeypatch.setattr(_vocab, "_BLOCK_BYTES", 64)  # one line per block
    split = CriteoTSVSpec(path=CRITEO_MALFORMED, on_malformed="skip").open()

    np.testing.assert_array_equal(split.ids, whole.ids)
    np.testing.assert_array_equal(split.dense, whole.dense)
    assert split.info == whole.info


def test_missing_file_and_empty_inputs(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="nowhere.tsv"):
        CriteoTSVSpec(path=tmp_path / "nowhere.tsv").open()
    (tmp_path / "empty.tsv").write_text("")
    with pytest.raises(DataError, match="empty"):
        CriteoTSVSpec(path=tmp_path / "empty.tsv").open()
    (tmp_path / "bad.tsv").write_text("0\t" * 39 + "x\n")
    with pytest.raises(DataError, match=r"no well-formed samples to read \(1 malformed lines"):
        CriteoTSVSpec(path=tmp_path / "bad.tsv", on_malformed="skip").open()


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"frequency_threshold": -1}, "frequency_threshold\n.*greater than or equal to 0"),
        ({"max_samples": 0}, "max_samples\n.*greater than or equal to 1"),
        ({"on_malformed": "ignore"}, "on_malformed"),
        ({"sample_rate": 0.5}, "sample_rate"),
    ],
)
def test_spec_validation(knobs: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CriteoTSVSpec(path=CRITEO_TRAIN, **knobs)


def test_spec_round_trips_with_its_kind() -> None:
    spec = CriteoTSVSpec.model_validate({"kind": "criteo-tsv", "path": str(CRITEO_TRAIN)})

    assert spec.path == CRITEO_TRAIN and spec.labelled is None and spec.on_malformed == "error"
    assert CriteoTSVSpec.model_validate_json(spec.model_dump_json()) == spec


# --- Avazu -------------------------------------------------------------------------------------


def test_avazu_train() -> None:
    trace = AvazuCSVSpec(path=AVAZU_TRAIN).open()

    assert trace.layout.names[:3] == ("hour", "C1", "banner_pos")
    assert trace.layout.names[-2:] == ("C21", "weekday") and trace.layout.num_tables == 23
    assert "id" not in trace.layout.names and "click" not in trace.layout.names
    assert trace.labels.tolist() == [0, 0, 0, 1]
    assert trace.dense.shape == (4, 0)
    assert local_ids(trace, "hour") == [1, 1, 1, 2]  # "00", "00", "00", "13"
    assert table_size(trace, "hour") == 3
    assert local_ids(trace, "weekday") == [1, 1, 1, 2]  # 2014-10-21 Tue, 2014-10-22 Wed
    assert local_ids(trace, "device_ip") == [1, 2, 3, 4]
    assert local_ids(trace, "C20") == [1, 2, 2, 3]  # -1, 100084, 100084, 100191
    assert trace.info["labelled"] is True and trace.info["kind"] == "avazu-csv"


def test_avazu_test_file_has_no_click() -> None:
    trace = AvazuCSVSpec(path=AVAZU_TEST).open()

    assert trace.info["labelled"] is False and trace.labels.tolist() == [0, 0]
    assert local_ids(trace, "hour") == [1, 2]  # "00", "23"
    assert local_ids(trace, "weekday") == [1, 1]  # both 2014-10-31, a Friday
    assert trace.layout.num_tables == 23


def test_avazu_threshold_and_without_weekday() -> None:
    trace = AvazuCSVSpec(path=AVAZU_TRAIN, frequency_threshold=2, add_weekday=False).open()

    assert trace.layout.num_tables == 22 and "weekday" not in trace.layout.names
    assert local_ids(trace, "site_id") == [2, 2, 2, 1]  # 84c7ba46 seen once
    assert local_ids(trace, "app_id") == [2, 2, 2, 2]


def test_avazu_bad_hour_and_click(tmp_path: Path) -> None:
    lines = AVAZU_TRAIN.read_text().splitlines()
    lines[2] = lines[2].replace(",14102100,", ",14102125,")  # hour 25
    lines[3] = lines[3].replace(",0,14102100,", ",yes,14102100,")
    path = tmp_path / "train.csv"
    path.write_text("\n".join(lines) + "\n")

    with pytest.raises(TraceFormatError, match=r"train.csv:3: hour is not YYMMDDHH: '14102125'"):
        AvazuCSVSpec(path=path).open()
    trace = AvazuCSVSpec(path=path, on_malformed="skip").open()
    assert trace.info["malformed_lines"] == [3, 4]
    assert trace.info["malformed_reasons"][1] == "click is not 0 or 1: 'yes'"
    assert trace.labels.tolist() == [0, 1]


def test_avazu_rejects_other_headers(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("id,click,hour,colour\n1,0,14102100,red\n")
    with pytest.raises(TraceFormatError, match=r"other.csv:1: not an Avazu header.*'colour'"):
        AvazuCSVSpec(path=path).open()


# --- MovieLens ---------------------------------------------------------------------------------


def test_movielens_100k_u_data() -> None:
    trace = MovieLensSpec(path=FIXTURES / "movielens_u.data").open()

    assert trace.layout.names == ("user", "item")
    assert "u.data" in trace.info["format"]
    assert local_ids(trace, "user") == [1, 2, 3, 1, 4]  # 196, 186, 22, 196, 166
    assert local_ids(trace, "item") == [1, 2, 3, 4, 1]  # 242, 302, 377, 51, 242
    assert trace.labels.tolist() == [0, 0, 0, 1, 1]  # ratings 3, 3, 1, 4, 5
    assert trace.dense.shape == (5, 0)


def test_movielens_1m_ratings_dat() -> None:
    trace = MovieLensSpec(path=FIXTURES / "movielens_ratings.dat").open()

    assert "ratings.dat" in trace.info["format"]
    assert local_ids(trace, "user") == [1, 1, 1, 2]
    assert local_ids(trace, "item") == [1, 2, 3, 1]  # 1193, 661, 914, 1193
    assert trace.labels.tolist() == [1, 0, 0, 1]


def test_movielens_csv_and_positive_threshold() -> None:
    path = FIXTURES / "movielens_ratings.csv"
    trace = MovieLensSpec(path=path).open()
    strict = MovieLensSpec(path=path, positive_threshold=4.5).open()

    assert "ratings.csv" in trace.info["format"]
    assert local_ids(trace, "user") == [1, 1, 2] and local_ids(trace, "item") == [1, 2, 1]
    assert trace.labels.tolist() == [1, 0, 1]  # 4.0, 3.5, 4.5
    assert strict.labels.tolist() == [0, 0, 1]


def test_movielens_sort_by_time_keeps_the_earliest() -> None:
    path = FIXTURES / "movielens_u.data"
    ordered = MovieLensSpec(path=path, sort_by_time=True).open()
    earliest = MovieLensSpec(path=path, sort_by_time=True, max_samples=2).open()

    # timestamps 881250949, 891717742, 878887116, 880606923, 886397596 -> lines 3, 4, 1, 5, 2
    assert local_ids(ordered, "user") == [3, 1, 1, 4, 2]
    assert ordered.labels.tolist() == [0, 1, 0, 1, 0]
    assert local_ids(earliest, "user") == [2, 1]  # users 22 and 196; rows in first-seen order
    assert table_size(earliest, "user") == 3


def test_movielens_malformed_and_unknown(tmp_path: Path) -> None:
    bad = tmp_path / "ratings.dat"
    bad.write_text("1::2::5::978300760\n1::3::x::978300761\n")
    with pytest.raises(TraceFormatError, match=r"ratings.dat:2: rating is not a number: 'x'"):
        MovieLensSpec(path=bad).open()
    assert MovieLensSpec(path=bad, on_malformed="skip").open().info["malformed_skipped"] == 1
    bad.write_text("1::2::5::978300760\n1::3::978300761\n")
    with pytest.raises(TraceFormatError, match=r":2: expected 4 '::'-separated fields, found 3"):
        MovieLensSpec(path=bad).open()
    other = tmp_path / "other.txt"
    other.write_text("hello world\n")
    with pytest.raises(TraceFormatError, match="not a MovieLens rating file"):
        MovieLensSpec(path=other).open()


def test_movielens_rejects_infinite_threshold() -> None:
    with pytest.raises(ValidationError, match="must be a finite rating, got inf"):
        MovieLensSpec(path="x", positive_threshold=float("inf"))


# --- vocabulary --------------------------------------------------------------------------------

raw_values = st.sampled_from(["", "a", "b", "c", "d", "e"])
chunked_blocks = st.lists(st.lists(st.lists(raw_values, max_size=6), min_size=1, max_size=3))


@settings(max_examples=60, deadline=None)
@given(blocks=chunked_blocks, threshold=st.integers(0, 3))
def test_table_vocab_matches_a_first_seen_reference(
    blocks: list[list[list[str]]], threshold: int
) -> None:
    vocab = TableVocab()
    for chunks in blocks:
        column = pa.chunked_array([pa.array(chunk, pa.string()) for chunk in chunks])
        vocab.add(*encode_column(column))
    local, size, rare = vocab.finish(threshold)

    values = [v for chunks in blocks for chunk in chunks for v in chunk]
    counts = Counter(v for v in values if v)
    first_row = 2 if threshold > 1 else 1
    row_of: dict[str, int] = {}
    for v in values:
        if v and v not in row_of and counts[v] >= max(threshold, 1):
            row_of[v] = first_row + len(row_of)
    assert local.tolist() == [0 if not v else row_of.get(v, 1) for v in values]
    assert size == first_row + len(row_of)
    assert rare == sum(1 for c in counts.values() if c < max(threshold, 1))
