"""The claims table: one row per claim with both variants' measurements and verdicts."""

from __future__ import annotations

from typing import Any

from heraldbench.platform.reproduce.claims import CLAIMS, Claim
from heraldbench.platform.reproduce.runner import Measurement
from heraldbench.platform.reproduce.verdicts import judge

__all__ = ["COLUMNS", "claim_rows", "markdown"]

#: The Markdown table's columns (the JSON rows hold more: the setting, the differences, reasons).
COLUMNS = ("claim", "source", "published", "normative", "released", "verdict")


def _cell(claim: Claim, measurement: Measurement | None) -> dict[str, Any]:
    if measurement is None:
        verdict = judge(claim.target, None, claim.unverifiable or "no released variant")
        return {"value": None, "shown": "–", "verdict": verdict.status, "reason": verdict.reason}
    verdict = judge(claim.target, measurement.value, measurement.note)
    reason = verdict.reason
    if measurement.value is not None and measurement.note:
        reason += f"; {measurement.note}"
    shown = "–" if measurement.value is None else claim.target.show(measurement.value)
    return {"value": measurement.value, "shown": shown, "verdict": verdict.status,
            "reason": reason}  # fmt: skip


def claim_rows(measured: dict[str, dict[str, Measurement]]) -> list[dict[str, Any]]:
    """A row per claim of :data:`CLAIMS` from :func:`~.runner.measure`'s measurements."""
    rows = []
    for claim in CLAIMS:
        normative = measured["normative"].get(claim.metric) if claim.metric else None
        released = (measured["released"].get(claim.metric)
                    if claim.metric and claim.variants else None)  # fmt: skip
        rows.append({
            "key": claim.key, "claim": claim.claim, "source": claim.source,
            "published": claim.target.text().removeprefix("the published "),
            "tolerance": f"±{claim.target.delta(claim.target.tolerance)}",
            "setting": claim.setting, "differs": claim.differs,
            "normative": _cell(claim, normative),
            "released": _cell(claim, released) if claim.variants else None,
        })  # fmt: skip
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table, then each row's measured reasons and setting."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    notes = []
    for i, row in enumerate(rows, 1):
        released = row["released"]
        verdict = row["normative"]["verdict"]
        if released is not None and released["verdict"] != verdict:
            verdict += f" (released: {released['verdict']})"
        cells = [f"{row['claim']} [{i}]", row["source"],
                 f"{row['published']} (±{row['tolerance'][1:]})", row["normative"]["shown"],
                 released["shown"] if released else "–", verdict]  # fmt: skip
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
        why = f"normative: {row['normative']['reason']}"
        if released is not None:
            why += f"; released: {released['reason']}"
        notes.append(
            f"{i}. **{row['key']}**: {why}. Setting: {row['setting']}. Differs: {row['differs']}"
        )
    return "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"
