"""The command line, run as a user runs it: a real subprocess on a real spec file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

SPEC = {
    "name": "cli",
    "dataset": {"kind": "synthetic-criteo", "samples": 20000, "scale": 0.002, "seed": 1},
    "cluster": {"workers": 4, "batch_size": 64},
    "cache": {"ratio": 0.1},
    "schedulers": [
        {"kind": "naive"},
        {"kind": "herald", "lookahead": 1},
        {"kind": "herald-sync-only"},
        {"kind": "herald-partition-only"},
    ],
}


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "from heraldbench.platform.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300
    )


def _write(tmp_path: Path, spec: dict) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_simulate_json_reports_every_scheduler_against_naive(tmp_path: Path) -> None:
    done = _cli("simulate", str(_write(tmp_path, SPEC)), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["experiment"]["name"] == "cli"
    runs = {run["scheduler"]: run for run in doc["runs"]}
    assert list(runs) == ["naive", "herald", "herald-sync-only", "herald-partition-only"]
    assert runs["naive"]["relative"] == {"pull": 1.0, "push": 1.0, "overall": 1.0}
    for run in runs.values():
        counts = run["counts"]
        assert set(counts) >= {"accesses", "hits", "miss_pull", "update_pull", "evict_push",
                               "update_push", "flush_push", "allreduce"}
        assert counts["hits"] + counts["miss_pull"] + counts["update_pull"] == counts["lookups"]
        assert run["bytes"]["pull"] == (counts["miss_pull"] + counts["update_pull"]) * 128 * 4
        assert run["iterations"] == 20000 // 256
    assert runs["herald"]["params"] == {"lookahead": 1, "variant": "normative"}
    # The direction of Herald's Table 1: Herald below naive everywhere, ablations in between.
    herald = runs["herald"]["relative"]
    assert herald["pull"] < 1 and herald["push"] < 1 and herald["overall"] < 1
    for ablation in ("herald-sync-only", "herald-partition-only"):
        assert herald["overall"] < runs[ablation]["relative"]["overall"] < 1


def test_simulate_table_on_stdout(tmp_path: Path) -> None:
    done = _cli("simulate", str(_write(tmp_path, SPEC)))
    assert done.returncode == 0, done.stderr
    assert "herald-partition-only" in done.stdout and "overall" in done.stdout


def test_bad_spec_exits_2_naming_the_field(tmp_path: Path) -> None:
    bad = dict(SPEC, cluster={"workers": 0, "batch_size": 64})
    done = _cli("simulate", str(_write(tmp_path, bad)))
    assert done.returncode == 2
    assert "cluster.workers" in done.stderr and "Traceback" not in done.stderr


def test_train_spec_is_refused_by_simulate_unless_asked(tmp_path: Path) -> None:
    path = _write(tmp_path, dict(SPEC, mode="train"))
    refused = _cli("simulate", str(path))
    assert refused.returncode == 2 and "--simulate-only" in refused.stderr
    assert _cli("simulate", str(path), "--simulate-only", "--json").returncode == 0


def test_too_small_cache_is_a_clear_error(tmp_path: Path) -> None:
    done = _cli("simulate", str(_write(tmp_path, dict(SPEC, cache={"rows": 10}))))
    assert done.returncode == 2
    assert "cannot hold one worker's ids" in " ".join(done.stderr.split())
    assert "cluster.batch_size" in done.stderr and "Traceback" not in done.stderr


def test_validate_refuses_what_could_not_run(tmp_path: Path) -> None:
    """A missing dataset file, a batch the cache cannot hold, `workers: true`: exit 2."""
    cases = {
        "missing": {**SPEC, "dataset": {"kind": "criteo-tsv", "path": str(tmp_path / "no.tsv")}},
        "batch": {**SPEC, "cluster": {"workers": 4, "batch_size": 10**9}},
        "bool": {**SPEC, "cluster": {"workers": True, "batch_size": 64}},
    }
    said = {"missing": str(tmp_path / "no.tsv"), "batch": "cluster.batch_size",
            "bool": "cluster.workers"}  # fmt: skip
    for name, spec in cases.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(spec))
        result = _cli("validate", str(path))
        assert result.returncode == 2, (name, result.stdout, result.stderr)
        assert said[name] in result.stderr.replace("\n", ""), (name, result.stderr)


def test_version_help_and_schedulers_read_as_documented() -> None:
    from importlib import metadata

    version = _cli("--version")
    assert version.returncode == 0
    assert version.stdout.strip() == f"heraldbench {metadata.version('heraldbench')}"
    for command in ("simulate", "validate", "train"):
        help_text = _cli(command, "--help").stdout
        assert "SPEC" in help_text and "{spec}" not in help_text, command
        assert "<bool>" not in help_text, command
    listing = _cli("schedulers").stdout
    assert "research/" not in listing and "embedding_dim" not in listing
    assert "hot_ratio" in listing and "lookahead" in listing


def test_the_cli_runs_on_a_typer_without_the_help_hook_it_adjusts() -> None:
    """pyproject allows typer >= 0.15; only 0.29 has the flag-label hook the CLI patches (an older
    typer failed at import on a GPU machine)."""
    # The hook hidden while the CLI is imported, then given back to typer, which calls it.
    code = ("from typer import core\n"
            "hidden = {c: vars(c)['display_type_rich'] for c in core.TyperOption.__mro__\n"
            "          if 'display_type_rich' in vars(c)}\n"
            "for c in hidden: delattr(c, 'display_type_rich')\n"
            "from heraldbench.platform.cli import main\n"
            "for c, hook in hidden.items(): setattr(c, 'display_type_rich', hook)\n"
            "main()")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, "validate", "--help"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "SPEC" in done.stdout
