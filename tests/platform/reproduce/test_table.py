"""The claims table from constructed measurements: rows, verdicts, reasons and Markdown."""

from __future__ import annotations

from heraldbench.platform.reproduce import CLAIMS, claim_rows, markdown
from heraldbench.platform.reproduce.runner import Measurement


def _measured(value: float) -> dict[str, dict[str, Measurement]]:
    metrics = {c.metric for c in CLAIMS if c.metric}
    return {variant: {m: Measurement(value, "a bound") for m in metrics}
            for variant in ("normative", "released")}  # fmt: skip


def test_every_claim_gets_a_row_with_a_verdict_per_variant() -> None:
    rows = claim_rows(_measured(0.5))
    assert [r["key"] for r in rows] == [c.key for c in CLAIMS]
    by_key = {r["key"]: r for r in rows}
    assert by_key["herald-table1-pull"]["normative"]["verdict"] == "reproduced"
    assert by_key["herald-table1-push"]["normative"]["verdict"] == "not reproduced"
    assert by_key["herald-table1-push"]["normative"]["reason"].endswith("; a bound")
    assert by_key["fae-cpu-speedup"]["normative"]["verdict"] == "unverifiable"
    assert "CPU-only" in by_key["fae-cpu-speedup"]["normative"]["reason"]
    assert by_key["bagpipe-skew"]["released"] is None  # a trace figure: no scheduler variant


def test_a_metric_left_unmeasured_is_unverifiable_for_its_reason() -> None:
    measured = _measured(0.5)
    measured["released"]["bagpipe.speedup.overlap"] = Measurement(None, "no iteration emitted")
    row = next(r for r in claim_rows(measured) if r["key"] == "bagpipe-speedup")
    assert row["released"]["verdict"] == "unverifiable"
    assert row["released"]["reason"] == "no iteration emitted"


def test_the_markdown_has_one_table_row_and_one_note_per_claim() -> None:
    text = markdown(claim_rows(_measured(0.5)))
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table) == len(CLAIMS) + 1
    assert all(f"**{c.key}**" in text for c in CLAIMS)
