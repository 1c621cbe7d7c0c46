"""Verdict rules: a measured value against a published target and an explicit tolerance.

Four kinds of published figure, each with its own rule (``tol`` is absolute, in the figure's
own unit: a ratio, a fraction or a factor):

* ``value`` v: reproduced when |measured − v| ≤ tol.
* ``range`` [lo, hi] (a paper's span over its settings): reproduced when the measurement lies in
  [lo − tol, hi + tol].
* ``at_least`` v ("more than 92%"): reproduced when measured ≥ v − tol.
* ``up_to`` v (a paper's best case): reproduced when measured ≥ v − tol; a value above the
  best case still reproduces it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NOT_REPRODUCED", "REPRODUCED", "UNVERIFIABLE", "Verdict", "judge"]

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
UNVERIFIABLE = "unverifiable"


@dataclass(frozen=True)
class Verdict:
    """The outcome for one measurement: ``status`` and the measured reason."""

    status: str
    reason: str

    def __post_init__(self) -> None:
        if self.status not in (REPRODUCED, NOT_REPRODUCED, UNVERIFIABLE):
            raise ValueError(f"unknown verdict status {self.status!r}")


def judge(target, measured: float | None, why_missing: str = "") -> Verdict:
    """The verdict for ``measured`` against ``target`` (a :class:`~.claims.Target`).

    ``measured`` None is unverifiable, for the reason ``why_missing``."""
    if measured is None:
        return Verdict(UNVERIFIABLE, why_missing or "nothing measured")
    low, high, tol = target.low, target.high, target.tolerance
    if target.kind == "value":
        ok = abs(measured - low) <= tol
    elif target.kind == "range":
        ok = low - tol <= measured <= high + tol
    else:  # at_least, up_to: a floor
        ok = measured >= low - tol
    shown = target.show(measured)
    if ok and target.kind in ("value", "range"):
        return Verdict(REPRODUCED, f"{shown} is within ±{target.delta(tol)} of {target.text()}")
    if ok:
        return Verdict(REPRODUCED, f"{shown} reaches {target.text()} "
                                   f"(tolerance ±{target.delta(tol)})")  # fmt: skip
    side = "above" if measured > high else "below"
    gap = measured - high if measured > high else low - measured
    return Verdict(NOT_REPRODUCED,
                   f"{shown} is {target.delta(gap)} {side} {target.text()} "
                   f"(tolerance ±{target.delta(tol)})")  # fmt: skip
