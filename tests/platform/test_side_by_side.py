"""Schedulers and placements in one spec: ``heraldbench simulate`` (a real subprocess) shows
both in one table, relative to the spec's baseline, and refuses bad input naming the field."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.spec import parse_spec

SPEC = {
    "name": "sbs",
    "dataset": {"kind": "synthetic-criteo", "samples": 20000, "scale": 0.002, "seed": 1},
    "cluster": {"workers": 4, "batch_size": 64, "hosts": 2},
    "embedding_dim": 16,
    "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
    "placements": [{"kind": "row-wise"}, {"kind": "flexshard", "memory_headroom": 0.5}],
    "baseline": "row-wise",
}


def _cli(tmp_path: Path, spec: dict, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    code = "from heraldbench.platform.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code, *args, str(path)], check=False,
                          capture_output=True, text=True, timeout=300)
    done.stderr = " ".join(done.stderr.split())  # as one line, however the terminal wrapped it
    return done


def test_simulate_json_has_schedulers_and_placements_side_by_side(tmp_path: Path) -> None:
    done = _cli(tmp_path, SPEC, "simulate", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    comparison = doc["side_by_side"]
    assert comparison["baseline"] == "row-wise"
    rows = {r["label"]: r for r in comparison["rows"]}
    assert list(rows) == ["naive", "herald", "row-wise", "flexshard memory_headroom=0.5"]
    assert rows["row-wise"]["baseline"] and rows["row-wise"]["relative"]["bytes"] == 1.0
    assert set(rows["row-wise"]["relative"]["comm"].values()) == {1.0}
    assert {r["paradigm"] for r in rows.values()} == {"scheduler", "placement"}
    runs = {r["scheduler"]: r for r in doc["runs"]}
    naive = rows["naive"]
    # a scheduler's rows go through the parameter server's link: all inter-host
    assert naive["bytes_per_iteration"] == {
        "intra_host": 0.0,
        "inter_host": runs["naive"]["bytes"]["overall"] / runs["naive"]["iterations"]}
    assert set(naive["comm_ms_per_iteration"]) == {"tcp-100g", "rdma-100g", "pcie4-x16", "dgx1-v100"}
    assert set(rows["flexshard memory_headroom=0.5"]["comm_ms_per_iteration"]) == \
        set(naive["comm_ms_per_iteration"])
    flex, row_wise = rows["flexshard memory_headroom=0.5"], rows["row-wise"]
    assert flex["bytes_per_iteration"]["inter_host"] < row_wise["bytes_per_iteration"]["inter_host"]
    assert flex["relative"]["bytes"] == pytest.approx(
        sum(flex["bytes_per_iteration"].values()) / sum(row_wise["bytes_per_iteration"].values()))
    placed = {p["label"]: p for p in doc["placements"]}
    assert placed["flexshard memory_headroom=0.5"]["params"] == {"memory_headroom": 0.5}


def test_simulate_prints_one_table_of_both(tmp_path: Path) -> None:
    done = _cli(tmp_path, SPEC, "simulate")
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("relative to row-wise"):]  # at 80 columns
    for label in ("naive", "herald", "row-wise", "flexshard memory_headroom=0.5"):
        assert label in table
    assert "inter MB/it" in table and "× bytes" in table and "not shown at this width" in table


@pytest.mark.parametrize(("change", "words"), [
    ({"cluster": {"workers": 4, "hosts": 3, "devices_per_host": 2}},
     ["cluster.hosts × cluster.devices_per_host = 3 × 2 = 6", "cluster.workers is 4"]),
    ({"cluster": {"workers": 4, "hosts": 3}}, ["cluster.hosts = 3", "cluster.workers = 4"]),
    ({"placements": [{"kind": "diagonal"}]}, ["placements.0", "unknown placement 'diagonal'"]),
    ({"placements": [{"kind": "flexshard", "headroom": 1}]},
     ["placements.0", "no knob 'headroom'", "memory_headroom"]),
    ({"placements": [{"kind": "row-wise", "args": 1}]},  # no constructor of its own: no knobs
     ["placements.0", "no knob 'args'; its knobs: none"]),
    ({"baseline": "table-wise"}, ["baseline", "'table-wise'"]),
])
def test_bad_input_exits_2_naming_the_field(tmp_path: Path, change: dict, words: list) -> None:
    done = _cli(tmp_path, {**SPEC, **change}, "simulate", "--json")
    assert done.returncode == 2 and done.stdout == ""
    for word in words:
        assert word in done.stderr, done.stderr


def test_a_plan_over_device_memory_exits_2_with_nothing_written(tmp_path: Path) -> None:
    spec = {**SPEC, "cluster": {**SPEC["cluster"], "device_memory": "1KiB"}}
    done = _cli(tmp_path, spec, "simulate", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert "placements.0: row-wise needs at least" in done.stderr  # refused before any work
    assert "cluster.device_memory = 1,024 bytes" in done.stderr


def test_a_plan_within_the_bound_but_over_memory_exits_2_with_nothing_written(
        tmp_path: Path) -> None:
    """Table-wise holds whole tables: its plan needs more than an even share of the rows."""
    even = 1_166_710  # row-wise's least bytes a device for SPEC's tables (the bound above)
    spec = {**SPEC, "placements": [{"kind": "table-wise"}], "baseline": "naive",
            "cluster": {**SPEC["cluster"], "device_memory": even + 1}}
    done = _cli(tmp_path, spec, "simulate", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert "placements.0: table-wise does not fit: table 'C" in done.stderr


def test_a_recshard_no_layout_of_which_fits_exits_2_before_the_trace(tmp_path: Path) -> None:
    """RecShard reads the trace's statistics, but which rows stay on a device never changes how
    many: with host memory taking nothing, some table is larger than a device (the lower bound,
    an even share, passes), and the spec is refused before any trace is made."""
    even = 1_166_710  # row-wise's least bytes a device for SPEC's tables
    spec = {**SPEC, "placements": [{"kind": "recshard"}], "baseline": "naive",
            "cluster": {**SPEC["cluster"], "device_memory": even + 1, "host_memory": "1KiB"}}
    done = _cli(tmp_path, spec, "simulate", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert "placements.0: recshard does not fit: recshard finds no placement" in done.stderr
    assert "cluster.host_memory = 1,024 bytes" in done.stderr


def test_a_plan_that_fits_float32_rows_but_not_float64_is_refused_for_a_float64_training(
        tmp_path: Path) -> None:
    """A float64 training places rows of twice the bytes: row-wise's plan fits float32 rows
    exactly, so the spec simulates, and a float64 training of it is refused before any work."""
    even = 1_166_710  # row-wise's least bytes a device for SPEC's float32 rows
    base = {**SPEC, "placements": [{"kind": "row-wise"}], "baseline": "naive",
            "cluster": {**SPEC["cluster"], "device_memory": 1_167_084}}  # row-wise's plan, exactly
    assert _cli(tmp_path, base, "simulate", "--json").returncode == 0
    trained = {**base, "train": {"dtype": "float64", "max_iterations": 2}}
    done = _cli(tmp_path, trained, "simulate", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert f"placements.0: row-wise needs at least {2 * even:,} bytes" in done.stderr
    assert "cluster.device_memory = 1,167,084 bytes" in done.stderr


def test_place_reads_the_cluster_from_the_spec(tmp_path: Path) -> None:
    spec = {**SPEC, "cluster": {"workers": 4, "batch_size": 64, "hosts": 4}}
    done = _cli(tmp_path, spec, "place", "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["placement"]: r for r in json.loads(done.stdout)}
    assert set(rows) == {"row-wise", "flexshard"}  # the spec's placements
    # four hosts of one device: every remote lookup crosses hosts
    assert rows["row-wise"]["intra_host_bytes_per_iteration"] == 0
    wrong = _cli(tmp_path, spec, "place", "--devices-per-host", "2")
    assert wrong.returncode == 2 and "cluster.workers is 4" in wrong.stderr


def test_the_cluster_defaults_to_one_host_of_every_worker() -> None:
    spec = parse_spec({k: v for k, v in SPEC.items() if k not in ("cluster", "baseline")})
    assert spec.cluster.hosts == 1 and spec.cluster.devices_on_each_host == 8
    assert spec.baseline == "naive"
    with pytest.raises(SpecError, match="listed twice"):
        parse_spec({**SPEC, "placements": [{"kind": "row-wise"}, {"kind": "row-wise"}]})


def test_the_report_has_the_side_by_side_table(tmp_path: Path) -> None:
    done = _cli(tmp_path, SPEC, "simulate", "--json", "--report", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "report" / "side_by_side.md").read_text()
    assert "relative to row-wise" in text and "| flexshard memory_headroom=0.5 | placement |" in text
    comparison = (tmp_path / "report" / "comparison.md").read_text()
    section = comparison[comparison.index("## Schedulers and placements, relative to row-wise"):]
    assert "| herald | scheduler |" in section and "tcp-100g ms/it" in section
    assert "| row-wise | placement |" in section and "1.00×" in section


def test_the_side_by_side_csv_holds_every_row_s_figures(tmp_path: Path) -> None:
    """The CSV's figures are the JSON's: a reader of the report gets the same numbers."""
    done = _cli(tmp_path, SPEC, "simulate", "--json", "--report", str(tmp_path / "report"))
    rows = json.loads(done.stdout)["side_by_side"]["rows"]
    with (tmp_path / "report" / "side_by_side.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert [r["label"] for r in table] == [r["label"] for r in rows]
    for line, row in zip(table, rows, strict=True):
        assert float(line["inter_host_bytes_per_iteration"]) == pytest.approx(
            row["bytes_per_iteration"]["inter_host"], rel=1e-12)
        assert float(line["relative_comm_tcp-100g"]) == pytest.approx(
            row["relative"]["comm"]["tcp-100g"], rel=1e-12)
        assert (line["device_memory_max_bytes"] == "") == (row["paradigm"] == "scheduler")


def test_a_report_of_schedulers_alone_has_no_placement_section(tmp_path: Path) -> None:
    spec = {k: v for k, v in SPEC.items() if k not in ("placements", "baseline")}
    done = _cli(tmp_path, spec, "simulate", "--json", "--report", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr
    assert "placement" not in (tmp_path / "report" / "comparison.md").read_text()
    assert not (tmp_path / "report" / "side_by_side.csv").exists()


def test_a_spec_with_ragged_features_runs_every_scheduler_and_placement(tmp_path: Path) -> None:
    """Ragged multi-hot and sequence tables: every cache scheduler counts the ids the samples
    read (no pad), and every placement is placed beside them."""
    from heraldbench.platform.schedulers import registered

    spec = {
        "name": "ragged",
        "dataset": {"kind": "synthetic", "profile": "movielens-100k", "samples": 20000,
                    "scale": 1.0, "seed": 1,
                    "features": {"multi_hot": {"sizes": {"item": 3}, "lengths": "uniform",
                                               "pooling": "mean"},
                                 "sequence": {"user": "user", "item": "item", "length": 8,
                                              "min_length": 1}}},
        "cluster": {"workers": 4, "batch_size": 32, "hosts": 2},
        "cache": {"rows": 4000}, "embedding_dim": 16,
        "schedulers": [{"kind": k} for k in sorted(registered())],
        "placements": [{"kind": k} for k in ("table-wise", "row-wise", "table-row-wise",
                                              "column-wise", "data-parallel", "recshard",
                                              "flexshard")],
        "baseline": "row-wise",
    }
    done = _cli(tmp_path, spec, "simulate", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    trace = parse_spec(spec).dataset.open()
    batches = trace.num_samples // 128
    lengths = next(trace.chunks(batches * 128)).lengths
    assert trace.layout.ragged == (False, True, True) and lengths[:, 2].min() == 1
    for run in doc["runs"]:
        assert run["counts"]["accesses"] == lengths.sum(), run["scheduler"]
    assert {r["scheduler"] for r in doc["runs"]} == set(registered())
    assert len(doc["placements"]) == 7


def test_a_log_with_its_movies_genres_runs_every_scheduler_and_placement(
        tmp_path: Path) -> None:  # fmt: skip
    """A rating log with its movie file: each sample reads its movie's genres (a ragged table
    after the history made on the log), and every scheduler counts exactly those ids."""
    import numpy as np

    from heraldbench.platform.schedulers import registered

    rng = np.random.default_rng(3)
    ratings, movies = tmp_path / "u.data", tmp_path / "u.item"
    ratings.write_text("".join(f"{u}\t{m}\t{s}\t{880_000_000 + t}\n" for t, (u, m, s) in enumerate(
        zip(rng.integers(1, 41, 4_000), rng.integers(1, 151, 4_000), rng.integers(1, 6, 4_000),
            strict=True))))
    movies.write_text("".join(
        "|".join([str(m), "a film", "", "", "", *("1" if g in {m % 19, m % 7} else "0"
                                                 for g in range(19))]) + "\n"
        for m in range(1, 151)))
    spec = {
        "name": "genres",
        "dataset": {"kind": "movielens", "path": str(ratings), "items": str(movies),
                    "sort_by_time": True,
                    "features": {"sequence": {"user": "user", "item": "item", "length": 4,
                                              "min_length": 1}}},
        "cluster": {"workers": 4, "batch_size": 16, "hosts": 2},
        "cache": {"rows": 300}, "embedding_dim": 8,
        "schedulers": [{"kind": k} for k in sorted(registered())],
        "placements": [{"kind": k} for k in ("row-wise", "table-row-wise", "flexshard")],
        "baseline": "row-wise",
    }
    done = _cli(tmp_path, spec, "simulate", "--json")
    assert done.returncode == 0, done.stderr
    trace = parse_spec(spec).dataset.open()
    assert trace.layout.names == ("user", "item", "history", "genre")
    lengths = next(trace.chunks(trace.num_samples // 64 * 64)).lengths
    assert set(np.unique(lengths[:, 3])) == {1, 2}
    runs = json.loads(done.stdout)["runs"]
    assert {r["scheduler"] for r in runs} == set(registered())
    for run in runs:
        assert run["counts"]["accesses"] == lengths.sum(), run["scheduler"]


def test_a_placement_placed_by_the_tables_alone_says_so_in_the_report() -> None:
    """A greedy plan that missed memory was replaced by the plan of the tables alone: the
    report names it and why, and no other row."""
    from heraldbench.platform.sidebyside import compare, placement_row, side_by_side_md

    fits = {"label": "row-wise", "placement": "row-wise", "device_memory_max_bytes": 10,
            "bytes_per_iteration": {"intra_host": 1.0, "inter_host": 2.0},
            "comm_ms_per_iteration": {"tcp-100g": 1.0}, "load_balance": 1.0, "fallback": None}
    fell = fits | {"label": "table-wise", "placement": "table-wise",
                   "fallback": "the plan balanced by the trace's lookups does not fit"}
    rows = compare([placement_row(fits), placement_row(fell)], "row-wise")
    text = side_by_side_md({"side_by_side": {"rows": rows, "baseline": "row-wise"}}, "tcp-100g")
    assert "- `table-wise`: the plan balanced by the trace's lookups does not fit" in text
    assert "- `row-wise`" not in text
