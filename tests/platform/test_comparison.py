"""The simulate table at terminal widths: numbers are never cut, columns are left out instead."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from heraldbench.platform.comparison import COLUMNS, comparison_table
from heraldbench.platform.runner import simulate_experiment
from heraldbench.platform.spec import parse_spec


@pytest.fixture(scope="module")
def result():
    spec = parse_spec({
        "name": "widths", "dataset": {"kind": "synthetic-criteo", "samples": 20000,
                                      "scale": 0.002, "seed": 1},
        "cluster": {"workers": 4, "batch_size": 64}, "cache": {"ratio": 0.1},
        "schedulers": [{"kind": "naive"}, {"kind": "herald", "lookahead": 2}, {"kind": "het"}],
    })  # fmt: skip
    return simulate_experiment(spec)


@pytest.mark.parametrize("width", [80, 120])
def test_numbers_are_never_cut(result, width: int) -> None:
    console = Console(width=width, file=io.StringIO(), record=True)
    for printable in comparison_table(result, width=width):
        console.print(printable)
    text = console.export_text()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    header_lines = "\n".join(text.splitlines()[:4])
    shown = [h for h, _ in COLUMNS if h in header_lines]
    assert {"scheduler", "pull", "push", "overall"} <= set(shown)
    for run in result.runs:
        row = next(line for line in text.splitlines() if line.startswith(f"│ {run.label}"))
        for header, cell in COLUMNS:
            if header in shown and header != "scheduler":
                assert f" {cell(run)} " in row, (header, cell(run), row)
    if len(shown) < len(COLUMNS):
        left_out = [h for h, _ in COLUMNS if h not in shown]
        assert "not shown at this width: " + ", ".join(left_out) in " ".join(text.split())
