"""``heraldbench tune``, in-process on the session's cluster and MLflow store: trial lines, the
Pareto table, the files, resuming by running it again, and a bad spec refused before any work."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from heraldbench.pipelines.cli import app

SPEC = {
    "name": "cli-tune",
    "dataset": {"kind": "synthetic-criteo", "samples": 3000, "scale": 0.005, "seed": 4},
    "cluster": {"workers": 2, "batch_size": 32},
    "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
    "tuning": {
        "space": {
            "scheduler.lookahead": {"choices": [1, 4]},
            "cache.ratio": {"low": 0.05, "high": 0.4},
        },
        "objectives": ["traffic", "cache_memory"],
        "trials": 3,
        "sampler": {"kind": "tpe", "seed": 5},
    },
}


def invoke(client, mlflow_uri, *args: str):
    env = {
        "DASK_SCHEDULER_ADDRESS": client.scheduler.address,
        "MLFLOW_TRACKING_URI": mlflow_uri,
        "COLUMNS": "200",
    }
    return CliRunner().invoke(app, ["tune", *args], env=env)


def test_tune_prints_trials_and_the_front_and_resumes_when_run_again(
    client, mlflow_uri, home: Path, tmp_path: Path
) -> None:
    spec = tmp_path / "tune.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    first = invoke(client, mlflow_uri, str(spec), "--storage", storage)
    assert first.exit_code == 0, first.output
    assert len(re.findall(r"trial \d COMPLETE .*scheduler\.lookahead=", first.output)) == 3
    assert "3 trials (0 before, 3 added" in first.output
    assert "cli-tune: Pareto front" in first.output and "traffic ↓" in first.output
    assert str(home / "studies" / "cli-tune" / "plots" / "pareto.png") in first.output
    # No MLflow UI serves this store: no link that would not open, but how to open one.
    assert "MLflow run of this study" not in first.output
    assert "open its UI with: `heraldbench serve`" in first.output

    again = invoke(client, mlflow_uri, str(spec), "--storage", storage, "--trials", "2", "--json")
    assert again.exit_code == 0, again.output
    summary = json.loads(again.output[again.output.index("{") :])
    assert summary["trials_before"] == 3 and sorted(summary["added"]) == [3, 4]
    assert [t["number"] for t in summary["trials"]] == [0, 1, 2, 3, 4]
    assert summary["mlflow"] is None and Path(summary["plots"]["history"]).is_file()


def test_tune_refuses_a_spec_without_a_valid_tuning_section(client, mlflow_uri, tmp_path) -> None:
    spec = tmp_path / "bad.yaml"
    bad = {
        **SPEC,
        "tuning": {**SPEC["tuning"], "space": {"scheduler.lookahead": {"low": 0, "high": 4}}},
    }
    spec.write_text(yaml.safe_dump(bad))
    result = invoke(client, mlflow_uri, str(spec), "--storage", f"sqlite:///{tmp_path / 'o.db'}")
    assert result.exit_code == 2
    assert "tuning.space.scheduler.lookahead.low" in result.output and "(got 0)" in result.output
    assert not (tmp_path / "o.db").exists()  # refused before any storage or cluster work
    spec.write_text(yaml.safe_dump({k: v for k, v in SPEC.items() if k != "tuning"}))
    result = invoke(client, mlflow_uri, str(spec))
    assert result.exit_code == 2 and "tuning: a study needs a tuning section" in result.output
