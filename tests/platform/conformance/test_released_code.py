"""The released code itself, built and run beside heraldbench, where a checkout is given:
``HERALDBENCH_HERALD_REF`` (HKUST-SING/herald) and ``HERALDBENCH_HET_REF`` (PKU-DAIR/Hetu).
Without one the test is skipped: the golden fixtures (test_fixtures.py) hold the variants to
the released code's outputs in CI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUTS = {"herald": "HERALDBENCH_HERALD_REF", "het": "HERALDBENCH_HET_REF"}


def _checkout(system: str) -> str:
    path = os.environ.get(CHECKOUTS[system])
    if not path:
        pytest.skip(f"no checkout of {system}'s released code: set {CHECKOUTS[system]}")
    return path


def _conformance(tmp_path: Path, system: str, *args: str) -> subprocess.CompletedProcess:
    code = "from heraldbench.platform.cli import main; main()"
    env = os.environ | {"HERALDBENCH_HOME": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-c", code, "conformance", system, "--reference", _checkout(system),
         "--json", *args], capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip


@pytest.mark.parametrize("system", sorted(CHECKOUTS))
def test_released_variant_agrees_with_the_released_code(tmp_path: Path, system: str) -> None:
    done = _conformance(tmp_path, system)
    report = json.loads(done.stdout)
    assert done.returncode == 0, report["first_difference"]
    assert report["agrees"] and report["differences"] == []
    assert report["totals"]["miss_pull"]["heraldbench"] > 0


@pytest.mark.parametrize("system", sorted(CHECKOUTS))
def test_normative_variant_differs_with_an_explanation(tmp_path: Path, system: str) -> None:
    done = _conformance(tmp_path, system, "--variant", "normative")
    report = json.loads(done.stdout)
    assert done.returncode == 1 and not report["agrees"]
    assert report["first_difference"]["explanation"]
