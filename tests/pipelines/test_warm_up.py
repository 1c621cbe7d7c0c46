"""Where the kernels are compiled before a run shows it: a terminal, a pipe, the run's stage."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from heraldbench.pipelines.cluster import ClusterOptions
from heraldbench.pipelines.console import warm_up_here
from heraldbench.pipelines.grid import expand
from heraldbench.pipelines.tasks import RunTask, run_task
from heraldbench.platform import warmup
from heraldbench.platform.spec import parse_spec
from tests.api.helpers import tiny_spec


@pytest.fixture()
def cold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Nothing warmed on this machine yet, and no Dask scheduler named."""
    monkeypatch.setattr(warmup, "stamps_folder", lambda: tmp_path / "stamps")
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setenv("HERALDBENCH_HOME", str(tmp_path / "home"))
    return tmp_path


def test_a_command_on_a_local_cluster_says_what_it_compiles(cold: Path) -> None:
    spec = parse_spec(tiny_spec(name="warm", schedulers=[{"kind": "herald"}]))
    err = Console(file=io.StringIO(), width=200)
    warm_up_here(err, [spec], ClusterOptions())
    lines = err.file.getvalue().splitlines()
    # the dataset's reader in one process, the schedulers in another: each step shown as it starts
    label = "compiling the simulator's kernels, once per machine: "
    assert sorted(line.split("(")[1] for line in lines) == sorted(
        [f"reading {spec.dataset.kind})", "naive)", "herald)"]
    )
    done = [int(line.removeprefix(label).split(" of ")[0]) for line in lines]
    assert all(line.startswith(label) and " of 3 (" in line for line in lines)
    assert done == sorted(done) and done[0] == 0
    again = Console(file=io.StringIO(), width=200)
    warm_up_here(again, [spec], ClusterOptions())
    assert again.file.getvalue() == ""


def test_a_remote_cluster_compiles_on_its_own_machines(cold: Path) -> None:
    spec = parse_spec(tiny_spec(name="warm", schedulers=[{"kind": "herald"}]))
    err = Console(file=io.StringIO(), width=200)
    warm_up_here(err, [spec], ClusterOptions(address="tcp://127.0.0.1:1"))
    assert err.file.getvalue() == "" and not warmup.is_warm(spec)


def test_a_task_reports_its_stage_then_clears_it(cold: Path) -> None:
    grid = expand(tiny_spec(name="stage", schedulers=[{"kind": "het"}]))
    planned = next(run for run in grid.runs if not run.baseline_added)
    stages: list[str | None] = []
    record = run_task(RunTask.for_run(planned, "simulate", "heraldbench-stage-0", None),
                      on_stage=stages.append)  # fmt: skip
    assert record.status == "finished", record.error
    assert stages[0].startswith("compiling the simulator's kernels, once per machine: 0 of ")
    assert stages[-1] is None and all(stages[:-1])
    stages.clear()
    run_task(RunTask.for_run(planned, "simulate", "heraldbench-stage-1", None),
             on_stage=stages.append)  # fmt: skip
    assert stages == []  # warm now
