"""Whole-spec training, its JSON, the ``heraldbench train`` command, the spec section, devices."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from typer.testing import CliRunner

from heraldbench.platform.cli import app
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.runner import simulate_run
from heraldbench.platform.spec import parse_spec
from heraldbench.platform.train import resolve_device, split_trace
from heraldbench.platform.training import train_experiment
from tests.platform.train._tiny import tiny_split, tiny_trace, train_tiny

SPEC = {
    "name": "train-tiny",
    "mode": "train",
    "dataset": {"kind": "synthetic-criteo", "samples": 6000, "scale": 0.001, "seed": 1},
    "cluster": {"workers": 2, "batch_size": 64},
    "cache": {"ratio": 0.2},
    "embedding_dim": 8,
    "schedulers": [{"kind": "herald"}, {"kind": "het", "bound": 100}],
    "train": {"model": "small", "device": "cpu", "eval_interval": 15, "eval_fraction": 0.2},
}


@pytest.fixture(scope="module")
def result():
    return train_experiment(parse_spec(SPEC))


def test_every_run_reports_counts_metrics_and_throughput(result) -> None:
    doc = json.loads(json.dumps(result.to_json()))  # plain JSON, no NaN
    runs = {run["scheduler"]: run for run in doc["runs"]}
    assert list(runs) == ["naive", "herald", "het"]  # the baseline is added
    for run in runs.values():
        assert set(run["metrics"]) == {"auc", "logloss", "accuracy"}
        assert run["samples_per_second"] > 0
        assert run["counts"]["hits"] + run["counts"]["miss_pull"] + run["counts"]["update_pull"] \
            == run["counts"]["lookups"]
        assert len(run["loss"]) == run["iterations"] == 4800 // 128
        assert [e["iteration"] for e in run["evaluations"]] == [15, 30, 37]
        assert set(run["timing"]) >= {"schedule", "movement", "compute", "train"}
    assert runs["naive"]["metrics_vs_naive"] == {"auc": 0.0, "logloss": 0.0, "accuracy": 0.0}
    assert abs(runs["herald"]["metrics_vs_naive"]["auc"]) < 1e-6
    assert runs["het"]["training"]["stale_reads"] > 0
    assert runs["herald"]["relative"]["overall"] < 1


def test_trainer_counts_equal_the_simulator_on_the_spec(result) -> None:
    spec = parse_spec(SPEC)
    train, _ = split_trace(spec.dataset.open(), 0.2)
    for run, sched_spec in zip(result.runs[1:], spec.schedulers, strict=True):
        assert run.counts == simulate_run(spec, sched_spec, trace=train).counts


def test_split_holds_out_the_end_and_caps_training() -> None:
    trace = tiny_trace(samples=1000)
    train, held_out = split_trace(trace, 0.1, max_train_samples=640)
    assert train.num_samples == 640 and len(held_out) == 100
    assert np.array_equal(held_out.ids, trace.ids[900:])
    assert np.array_equal(next(train.chunks(1000)).ids, trace.ids[:640])
    with pytest.raises(SpecError, match="held-out"):
        split_trace(trace, 0.0001)


def test_max_iterations_limits_training() -> None:
    spec = parse_spec({**SPEC, "schedulers": [{"kind": "naive"}],
                       "train": {**SPEC["train"], "max_iterations": 5, "eval_interval": 0}})
    (run,) = train_experiment(spec).runs
    assert run.iterations == 5 and len(run.evaluations) == 1


def test_train_section_errors_name_the_field() -> None:
    with pytest.raises(SpecError, match=r"train\.eval_fraction"):
        parse_spec({**SPEC, "train": {"eval_fraction": 1.5}})
    with pytest.raises(SpecError, match=r"train\.lr"):
        parse_spec({**SPEC, "train": {"lr": 0.1}})
    with pytest.raises(SpecError, match=r"train\.device"):
        parse_spec({**SPEC, "train": {"device": "tpu"}})


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_a_gpu_is_a_clear_error() -> None:
    assert resolve_device("auto") == torch.device("cpu")
    with pytest.raises(SpecError, match="no CUDA device"):
        resolve_device("cuda")


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "from heraldbench.platform.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def test_train_command_prints_json_and_a_table(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    small = {**SPEC, "schedulers": [{"kind": "herald"}],
             "train": {**SPEC["train"], "max_iterations": 4, "eval_interval": 0}}
    path.write_text(yaml.safe_dump(small))
    done = _cli("train", str(path), "--json")
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["runs"]
    assert [r["scheduler"] for r in runs] == ["naive", "herald"]
    assert set(runs[1]["metrics"]) == {"auc", "logloss", "accuracy"}
    table = CliRunner().invoke(app, ["train", str(path)])
    assert table.exit_code == 0, table.output
    assert "AUC" in table.stdout and "herald" in table.stdout


def test_train_command_trains_bagpipe_with_the_simulators_counts(tmp_path: Path) -> None:
    spec = {**SPEC, "schedulers": [{"kind": "bagpipe", "lookahead": 8}],
            "train": {**SPEC["train"], "eval_interval": 0}}  # fmt: skip
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    done = _cli("train", str(path), "--json")
    assert done.returncode == 0, done.stderr
    runs = {run["scheduler"]: run for run in json.loads(done.stdout)["runs"]}
    parsed = parse_spec(spec)
    train, _ = split_trace(parsed.dataset.open(), parsed.train.eval_fraction)
    expected = simulate_run(parsed, parsed.schedulers[0], trace=train).counts
    assert runs["bagpipe"]["counts"] == expected.as_dict()
    assert expected.allreduce > 0 and set(runs["bagpipe"]["metrics"]) >= {"auc", "logloss"}


@pytest.mark.gpu
def test_cuda_training_matches_cpu_training() -> None:
    from tests.platform.train._tiny import SETTINGS
    from tests.platform.train.test_accuracy import max_difference

    split = tiny_split()
    cuda = SETTINGS.model_copy(update={"device": "cuda"})
    # every executor path: pulls and pushes, direct hand-overs, stale reads, a replicated table,
    # a replicated cache; the host queues them ahead of the GPU (pinned copies)
    for kind in ("naive", "herald", "herald-plus", "het", "fae", "bagpipe"):
        on_gpu, on_cpu = train_tiny(kind, split, settings=cuda), train_tiny(kind, split)
        assert on_gpu.device.startswith("cuda")
        assert on_gpu.counts == on_cpu.counts
        assert max_difference(on_gpu, on_cpu) < 1e-4


@pytest.mark.slow
def test_the_200k_criteo_like_spec_learns_under_every_scheduler() -> None:
    """The trainer's overhead target (docs/distributed.md) at the size of the issue's acceptance run (about 1 minute)."""
    spec = parse_spec({
        "name": "train-200k", "mode": "train",
        "dataset": {"kind": "synthetic-criteo", "samples": 200_000, "scale": 0.01, "seed": 1},
        "cluster": {"workers": 4, "batch_size": 128}, "cache": {"ratio": 0.1},
        "embedding_dim": 16,
        "schedulers": [{"kind": "herald"}, {"kind": "herald-plus"}, {"kind": "het"},
                       {"kind": "fae"}],
        "train": {"model": "reference", "device": "cpu"},
    })  # fmt: skip
    result = train_experiment(spec)
    runs = {run.scheduler: run for run in result.runs}
    for run in runs.values():
        assert run.metrics["auc"] > 0.7, run.scheduler
    assert runs["het"].training["stale_reads"] > 0
    train, _ = split_trace(spec.dataset.open(), 0.1)
    assert runs["herald"].counts == simulate_run(spec, spec.schedulers[0], trace=train).counts


def test_a_split_for_training_only_reads_no_held_out_samples():
    from heraldbench.platform.train import split_trace
    from tests.platform.train._tiny import tiny_trace

    trace = tiny_trace(samples=400)
    train, held_out = split_trace(trace, 0.25, read_held_out=False)
    assert held_out is None
    full_train, full_held_out = split_trace(trace, 0.25)
    assert train.num_samples == full_train.num_samples == 300 and len(full_held_out) == 100
