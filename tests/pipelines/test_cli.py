"""The pipelines' ``heraldbench`` commands, in-process on the session's cluster and store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from heraldbench.pipelines.cli import app
from tests.pipelines.preprocess import rawfiles


@pytest.fixture()
def env(client, mlflow_uri) -> dict[str, str]:
    """Point the commands at the session's cluster and MLflow store."""
    return {
        "DASK_SCHEDULER_ADDRESS": client.scheduler.address,
        "MLFLOW_TRACKING_URI": mlflow_uri,
        "COLUMNS": "200",
    }


def invoke(env, *args: str):
    return CliRunner().invoke(app, list(args), env=env)


def test_run_prints_the_comparison_with_mlflow_links(env, tmp_path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "cli-run",
                "dataset": {"kind": "synthetic-criteo", "samples": 2000, "scale": 0.005},
                "cluster": {"workers": 2, "batch_size": 32},
                "schedulers": [{"kind": "herald", "lookahead": [1, 2]}],
            }
        )
    )
    result = invoke(env, "run", str(spec), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "herald lookahead=2" in result.output and "1.000" in result.output
    # No MLflow UI runs on this store: no link (it would not open), but how to open one.
    assert "#/experiments/" not in result.output
    assert "open its UI with: `heraldbench serve`" in result.output
    assert (tmp_path / "out" / "report" / "table1.md").is_file()
    # The results file the run (and quickstart) writes is one `report` reads.
    report = invoke(env, "report", str(tmp_path / "out" / "results.json"), "--out",
                    str(tmp_path / "again"))  # fmt: skip
    assert report.exit_code == 0, report.output
    table = (tmp_path / "again" / "table1.md").read_text()
    assert "herald" in table and "naive" in table


def test_run_refuses_a_bad_grid_naming_the_field(env, tmp_path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "cli-bad",
                "dataset": {"kind": "synthetic-criteo", "samples": 10},
                "cache": {"ratio": [0.1, 5]},
                "schedulers": [{"kind": "herald"}],
            }
        )
    )
    result = invoke(env, "run", str(spec))
    assert result.exit_code == 2
    assert "cache.ratio" in result.output and "(at point cache.ratio=5)" in result.output


def test_preprocess_then_simulate_the_prepared_dataset(env, tmp_path) -> None:
    raw = rawfiles.movielens(tmp_path / "ratings.dat", 300, layout="dat")
    out = tmp_path / "ml"
    args = [
        "preprocess",
        "movielens",
        str(raw),
        "--out",
        str(out),
        "--set",
        "sort_by_time=true",
        "--part-size",
        "4KiB",
    ]
    first = invoke(env, *args)
    assert first.exit_code == 0, first.output
    assert "300 samples, 2 tables" in first.output and '"kind": "prepared"' in first.output
    again = invoke(env, *args)
    assert "up to date, nothing to do" in again.output
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "name": "ml",
                "dataset": {"kind": "prepared", "path": str(out)},
                "cluster": {"workers": 2, "batch_size": 4},
                "cache": {"rows": 16},
                "schedulers": [{"kind": "herald"}],
            }
        )
    )
    simulated = invoke(env, "simulate", str(spec), "--json")  # a platform command, still there
    assert simulated.exit_code == 0, simulated.output
    assert json.loads(simulated.output)["experiment"]["dataset"]["samples"] == 300


def test_preprocess_refuses_an_unknown_format_knob(env, tmp_path) -> None:
    raw = rawfiles.movielens(tmp_path / "ratings.csv", 10)
    result = invoke(
        env,
        "preprocess",
        "movielens",
        str(raw),
        "--out",
        str(tmp_path / "o"),
        "--set",
        "sort_by=true",
    )
    assert result.exit_code == 2 and "sort_by" in result.output


def test_quickstart_runs_every_scheduler_and_writes_the_report(env, home: Path) -> None:
    result = invoke(env, "quickstart", "--samples", "8192")
    assert result.exit_code == 0, result.output
    for kind in (
        "naive",
        "herald",
        "herald-sync-only",
        "herald-partition-only",
        "het",
        "herald-plus",
    ):
        assert f"\n{kind} " in result.output or f"│ {kind} " in result.output, kind
    assert (
        "8,192 samples" in result.output
        and "mlflow ui --backend-store-uri sqlite:///" in result.output
    )
    report = home / "quickstart" / "report"
    assert {"table1.md", "table1.png", "comparison.png"} <= {p.name for p in report.iterdir()}


def _opens(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
            return response.status == 200
    except OSError:
        return False


def test_every_mlflow_link_the_cli_prints_opens(env, tmp_path, mlflow_uri) -> None:
    """With an MLflow UI on the store (as `heraldbench serve` starts one), links are printed,
    and each opens."""
    import re

    from heraldbench.api.mlflow_ui import MlflowUI, _free_port
    from tests.api.helpers import poll

    ui = MlflowUI(mlflow_uri, _free_port(0), tmp_path / "mlartifacts")
    ui.start()
    try:
        poll(lambda: _opens(ui.url), timeout=120, interval=0.5)
        spec = tmp_path / "spec.yaml"
        spec.write_text(yaml.safe_dump({
            "name": "cli-links", "dataset": {"kind": "synthetic-criteo", "samples": 2000,
                                             "scale": 0.005},
            "cluster": {"workers": 2, "batch_size": 32}, "schedulers": [{"kind": "herald"}]}))
        result = invoke({**env, "HERALDBENCH_MLFLOW_UI_URL": ui.url}, "run", str(spec))
        assert result.exit_code == 0, result.output
        links = re.findall(r"http://127\.0\.0\.1:\d+/#/experiments/\d+/runs/\w+", result.output)
        assert links, result.output
        for link in links:
            run_id = link.rsplit("/", 1)[-1]
            assert _opens(link) and _opens(f"{ui.url}/ajax-api/2.0/mlflow/runs/get?run_id={run_id}")
    finally:
        ui.stop()


def test_run_prints_no_mlflow_info_lines(client, tmp_path) -> None:
    """A first run creates the MLflow store: MLflow's and alembic's INFO lines stay quiet."""
    import os
    import subprocess
    import sys

    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "quiet", "dataset": {"kind": "synthetic-criteo", "samples": 2000, "scale": 0.005},
        "cluster": {"workers": 2, "batch_size": 32}, "schedulers": [{"kind": "naive"}]}))
    env = {**os.environ, "HERALDBENCH_HOME": str(tmp_path / "fresh"), "COLUMNS": "120",
           "DASK_SCHEDULER_ADDRESS": client.scheduler.address}  # fmt: skip
    env.pop("MLFLOW_TRACKING_URI", None)
    code = "from heraldbench.api.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code, "run", str(spec)], capture_output=True,
                          text=True, timeout=300, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "fresh" / "mlflow.db").is_file()
    assert " INFO " not in done.stdout + done.stderr, done.stderr


def test_run_refuses_a_grid_over_the_cap_before_starting_anything(tmp_path) -> None:
    values = list(range(1, 151))
    spec = tmp_path / "big.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "big",
                "dataset": {"kind": "synthetic-criteo", "samples": 2000, "scale": 0.005},
                "embedding_dim": values,
                "schedulers": [{"kind": "herald", "lookahead": values}],
            }
        )
    )
    # No scheduler address: a LocalCluster would start if the spec got that far.
    result = invoke({"DASK_SCHEDULER_ADDRESS": "", "COLUMNS": "200"}, "run", str(spec))
    assert result.exit_code == 2, result.output
    assert "22,650 runs" in result.output


def test_run_refuses_a_batch_the_cache_cannot_hold_before_starting_anything(tmp_path) -> None:
    spec = tmp_path / "batch.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "batch",
                "dataset": {"kind": "synthetic-criteo", "samples": 2000, "scale": 0.005},
                "cluster": {"workers": 2, "batch_size": [16, 10**9]},
                "schedulers": [{"kind": "herald"}],
            }
        )
    )
    result = invoke({"DASK_SCHEDULER_ADDRESS": "", "COLUMNS": "200"}, "run", str(spec))
    assert result.exit_code == 2, result.output
    assert "cluster.batch_size" in result.output and "cannot hold" in result.output
