"""Reports: every file written, tables equal to the result's figures, images valid."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from heraldbench.platform.exceptions import DataError, NotFoundError, UnknownNameError
from heraldbench.platform.report import PUBLISHED_TABLE1, plot_series, write_report
from heraldbench.platform.report_files import report_command

FILES = ["table1.md", "comparison.md", "comparison.csv", "table1.png", "comparison.png"]


def _run(kind: str, relative: tuple[float, float, float], *, params=None, total_s=None,
         bound=None) -> dict:  # fmt: skip
    pull, push = round(1000 * relative[0]), round(800 * relative[1])
    run = {
        "scheduler": kind,
        "params": params or {},
        "counts": {"accesses": 5000, "lookups": 4000, "hits": 4000 - pull, "miss_pull": pull,
                   "update_pull": 0, "evict_push": 0, "update_push": push, "flush_push": 7,
                   "allreduce": 0.0, "metadata": 0},  # fmt: skip
        "totals": {"pull": pull, "push": push, "overall": float(pull + push)},
        "relative": dict(zip(("pull", "push", "overall"), relative)),
        "bytes": {"pull": pull * 512, "push": push * 512, "overall": (pull + push) * 512.0},
        "iterations": 10,
    }
    if total_s is not None:
        run["time"] = {"tcp-100g": {"profile": "tcp-100g", "total_s": total_s,
                                    "mean_iteration_s": total_s / 10, "compute_s": 0.001,
                                    "comm_s": total_s - 0.001}}  # fmt: skip
    if bound is not None:
        run["bound"] = bound
    return run


RESULT = {
    "experiment": {
        "name": "tiny",
        "cache_rows": 1234,
        "spec": {"name": "tiny", "cluster": {"workers": 8, "batch_size": 128},
                 "cache": {"policy": "lru"}, "embedding_dim": 128},  # fmt: skip
    },
    "runs": [
        _run("naive", (1.0, 1.0, 1.0), total_s=0.010),
        _run("herald", (0.6, 0.5, 0.5556), params={"lookahead": 1}, total_s=0.008,
             bound={"pulls": 300, "pushes": 200}),  # fmt: skip
        _run("herald-sync-only", (1.0, 0.9, 0.9556), total_s=0.009),
        _run("herald-partition-only", (0.6, 0.95, 0.7556)),  # no time: "not modelled"
        _run("het", (0.8, 0.3, 0.5778), params={"bound": 4, "policy": None}),
    ],
}


@pytest.fixture
def report(tmp_path: Path) -> Path:
    written = write_report(RESULT, tmp_path / "report")
    assert [p.name for p in written] == FILES
    return tmp_path / "report"


def _md_rows(path: Path) -> dict[str, list[str]]:
    """First cell -> the other cells of each body row of the markdown table."""
    rows = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and not set(cells[0]) <= {"-"}:
            rows[cells[0]] = cells[1:]
    return rows


def test_all_files_are_written_and_nonempty(report: Path) -> None:
    for name in FILES:
        assert (report / name).stat().st_size > 0, name


def test_table1_has_our_figures_next_to_the_published_ones(report: Path) -> None:
    rows = _md_rows(report / "table1.md")
    for title, kind in [("naive", "naive"), ("on-demand only", "herald-sync-only"),
                        ("partition only", "herald-partition-only"), ("Herald", "herald")]:
        run = next(r for r in RESULT["runs"] if r["scheduler"] == kind)
        cells = rows[f"{title} (`{kind}`)"]
        ours, published = cells[0::2], cells[1::2]
        assert [float(c) for c in ours] == [round(run["relative"][m], 3) for m in
                                            ("pull", "push", "overall")]  # fmt: skip
        assert [float(c) for c in published] == list(PUBLISHED_TABLE1[kind].values())
    text = (report / "table1.md").read_text()
    assert "0.460" in text and "0.420" in text and "0.520" in text  # Herald's published row
    assert "tiny: 8 workers × 128 samples, cache 1,234 rows (lru), dim 128" in text


def test_comparison_csv_equals_the_result(report: Path) -> None:
    with (report / "comparison.csv").open() as handle:
        records = list(csv.DictReader(handle))
    assert [r["label"] for r in records] == [
        "naive", "herald lookahead=1", "herald-sync-only", "herald-partition-only", "het bound=4"
    ]  # fmt: skip
    for record, run in zip(records, RESULT["runs"]):
        for metric, value in run["relative"].items():
            assert float(record[f"relative_{metric}"]) == value
        assert int(record["miss_pull"]) == run["counts"]["miss_pull"]
        assert float(record["bytes_overall"]) == run["bytes"]["overall"]
    herald = records[1]
    assert float(herald["speedup"]) == pytest.approx(0.010 / 0.008)
    assert float(herald["gap_pull"]) == pytest.approx(600 / 300)
    assert float(herald["gap_push"]) == pytest.approx(400 / 200)
    assert float(herald["gap_overall"]) == pytest.approx(1000 / 500)
    assert records[3]["speedup"] == "" and records[3]["time_total_s"] == ""


def test_comparison_md_shows_time_speedup_and_gap(report: Path) -> None:
    rows = _md_rows(report / "comparison.md")
    herald = rows["herald lookahead=1"]
    assert herald[:3] == ["0.600", "0.500", "0.556"]
    assert herald[-3:] == ["0.800 ms", "1.25×", "2.00×"]
    assert rows["herald-partition-only"][-3:] == ["not modelled", "—", "—"]
    assert "tcp-100g" in (report / "comparison.md").read_text()


def test_without_time_fields_the_report_says_not_modelled(tmp_path: Path) -> None:
    bare = copy.deepcopy(RESULT)
    for run in bare["runs"]:
        run.pop("time", None)
    write_report(bare, tmp_path)
    text = (tmp_path / "comparison.md").read_text()
    assert "not modelled (no run of this result carries a `time` field)" in text


def test_a_profile_the_runs_lack_is_not_modelled(tmp_path: Path) -> None:
    write_report(RESULT, tmp_path, profile="rdma-100g")
    rows = _md_rows(tmp_path / "comparison.md")
    assert rows["naive"][-3] == "not modelled"


def test_missing_table1_rows_say_not_run(tmp_path: Path) -> None:
    only_naive = {**RESULT, "runs": RESULT["runs"][:1]}
    write_report(only_naive, tmp_path)
    assert "not run" in (tmp_path / "table1.md").read_text()
    with Image.open(tmp_path / "table1.png") as image:
        assert image.size[0] > 0


def test_pngs_are_valid_legible_images(report: Path) -> None:
    for name in ("table1.png", "comparison.png"):
        with Image.open(report / name) as image:
            image.verify()
        with Image.open(report / name) as image:
            assert image.format == "PNG"
            width, height = image.size
            assert width >= 800 and height >= 500
            colors = np.asarray(image.convert("RGB")).reshape(-1, 3)
            assert len(np.unique(colors, axis=0)) > 10  # not a blank canvas


def test_plot_series_writes_a_png(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    series = {
        label: {k: rng.poisson(lam, 300).astype(float) for k in
                ("miss_pull", "update_pull", "evict_push", "update_push")}  # fmt: skip
        for label, lam in (("naive", 50), ("herald", 25))
    }
    out = plot_series(series, tmp_path / "plots" / "series.png")
    with Image.open(out) as image:
        assert image.format == "PNG" and image.size[0] > 500


def test_unknown_profile_lists_the_names(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="tcp-100g"):
        write_report(RESULT, tmp_path, profile="carrier-pigeon")


def test_report_command_reads_a_result_file(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(RESULT))
    written = report_command(path, tmp_path / "out", "tcp-100g")
    assert [p.name for p in written] == FILES
    with pytest.raises(NotFoundError):
        report_command(tmp_path / "missing.json", tmp_path / "out", "tcp-100g")
    path.write_text("{not json")
    with pytest.raises(DataError, match="not JSON"):
        report_command(path, tmp_path / "out", "tcp-100g")
    path.write_text(json.dumps({"experiment": {}}))
    with pytest.raises(DataError, match="runs"):
        report_command(path, tmp_path / "out", "tcp-100g")


def test_report_of_a_real_simulation(tmp_path: Path) -> None:
    """The runner's JSON, with modelled times attached as the runner would, reports cleanly."""
    from heraldbench.platform.runner import simulate_experiment
    from heraldbench.platform.spec import ExperimentSpec
    from heraldbench.platform.timemodel import model_times

    spec = ExperimentSpec.model_validate({
        "name": "real",
        "dataset": {"kind": "synthetic-criteo", "samples": 4096, "scale": 0.002, "seed": 1},
        "cluster": {"workers": 4, "batch_size": 64},
        "cache": {"ratio": 0.1},
        "schedulers": [{"kind": "herald", "lookahead": 1}],
    })  # fmt: skip
    result = simulate_experiment(spec)
    doc = result.to_json()
    for run, record in zip(result.runs, doc["runs"]):
        record["time"] = model_times(run.series, workers=4, batch_size=64, embedding_dim=128)
    write_report(doc, tmp_path)
    with (tmp_path / "comparison.csv").open() as handle:
        records = list(csv.DictReader(handle))
    assert [r["scheduler"] for r in records] == ["naive", "herald"]
    assert float(records[0]["speedup"]) == 1.0
    assert float(records[1]["relative_overall"]) == doc["runs"][1]["relative"]["overall"]
    assert "not run" in (tmp_path / "table1.md").read_text()  # no ablations in this spec


def test_report_command_reads_a_grid_submissions_results(tmp_path: Path) -> None:
    """`heraldbench run --out` / quickstart's results.json: one report per (point, seed)."""
    def submitted(point: str, seed: int, kind: str, relative) -> dict:
        result = {**_run(kind, relative), "cache_rows": 100, "dataset": {"samples": 10}}
        return {"action": "simulate", "label": kind, "point": point, "seed": seed,
                "status": "finished", "result": result}  # fmt: skip

    runs = [submitted(p, 0, k, r) for p in ("cache.ratio=0.1", "cache.ratio=0.2")
            for k, r in (("naive", (1, 1, 1)), ("herald", (0.5, 0.4, 0.45)))]  # fmt: skip
    runs.append({**runs[0], "status": "failed", "result": None})
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"experiment": {"name": "g", "spec": {}}, "runs": runs}))
    written = report_command(path, tmp_path / "out", "tcp-100g")
    folders = sorted({p.parent.name for p in written})
    assert folders == ["point-0-seed-0", "point-1-seed-0"]
    assert "herald" in (tmp_path / "out" / "point-1-seed-0" / "table1.md").read_text()


def _measured_run(label: str, iterations: int, compute: float) -> dict:
    seconds = {"compute": compute, "pull": 0.2, "push": 0.1, "allreduce": 0.05, "wait": 0.01,
               "schedule": 0.0}  # fmt: skip
    return {"scheduler": label, "label": label, "iterations": iterations, "measured": {
        "ranks": 2, "iteration_s": 0.02, "samples_per_second": 1234.0, "seconds": seconds,
        "bytes": {"network": 3_000_000, "stream": 5_000_000}}}  # fmt: skip


def test_a_distributed_trainings_measured_time_is_reported(tmp_path):
    from heraldbench.platform.report_measured import write_measured

    result = {"runs": [_measured_run("naive", 10, 0.5), {"scheduler": "simulated only"}]}
    written = write_measured(result, tmp_path)
    assert [p.name for p in written] == ["measured.md", "measured.png"]
    text = (tmp_path / "measured.md").read_text()
    assert "| naive | 2 | 20.00 | 1,234 | 0.500 | 0.200 | 0.100 | 0.050 | 0.010 | 0.000 | 3.00 | 5.00 |" in text
    assert "simulated only" not in text
    assert write_measured({"runs": [{"scheduler": "naive"}]}, tmp_path / "none") == []
