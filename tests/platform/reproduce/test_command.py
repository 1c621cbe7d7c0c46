"""``heraldbench reproduce`` as a user runs it: a subprocess at the smallest size it takes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from heraldbench.platform.reproduce import CLAIMS, MIN_SAMPLES

VERDICTS = {"reproduced", "not reproduced", "unverifiable"}


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "from heraldbench.platform.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, "reproduce", *args], capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("claims") / "out"
    return _cli("--samples", str(MIN_SAMPLES), "--json", "--out", str(out)), out


def test_every_claim_has_a_row_with_a_verdict(run) -> None:
    done, _ = run
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout)["claims"]
    assert [r["key"] for r in rows] == [c.key for c in CLAIMS]
    for row in rows:
        assert row["normative"]["verdict"] in VERDICTS and row["normative"]["reason"], row["key"]
        if row["released"] is not None:
            assert row["released"]["verdict"] in VERDICTS, row["key"]
    measured = {r["key"]: r["normative"]["value"] for r in rows}
    assert 0 < measured["herald-table1-overall"] < 1  # Herald saves traffic on this trace
    assert 0.5 < measured["bagpipe-skew"] <= 1
    assert 0 < measured["flexshard-traffic"] < 1  # flexshard sends less across hosts
    assert measured["flexshard-latency"] > 1 and measured["recshard-throughput"] > 1


def test_out_writes_the_table_as_json_and_markdown(run) -> None:
    done, out = run
    assert json.loads((out / "claims.json").read_text()) == json.loads(done.stdout)
    assert (out / "claims.md").read_text().startswith("| claim | source | published |")


def test_too_few_samples_is_refused_with_exit_2() -> None:
    done = _cli("--samples", "1000")
    assert done.returncode == 2 and "--samples 1,000" in done.stderr


def test_an_out_path_that_is_a_file_is_refused_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    done = _cli("--out", str(tmp_path / "taken"))
    assert done.returncode == 2 and "is not a folder" in done.stderr
