"""The time model, checked: modelled iteration time on a measured profile next to the measured one.

For every run of a distributed training (a run JSON with ``measured``) and a profile in its
``time``, :func:`time_check` puts side by side:

* ``modelled_s``: the model's mean iteration time on the profile (``time[profile]``), over the
  iterations after the first;
* ``measured_s``: the measured iteration time the model describes: the mean over the iterations
  after the first (``measured.steady``: the first pays start-up skew and first-touch costs, and
  is a cold cache's in the model) of the ranks' pull, push, compute, all-reduce and waiting. The
  ``schedule`` phase (each rank replaying the scheduler to obtain the decision stream; a real
  deployment runs the scheduler ahead, on its own host) is not modelled and is left out; it is
  shown apart, as is ``measured.iteration_s`` (training wall time over iterations);
* ``ratio`` = modelled / measured, and each scheduler's speedup over naive, modelled and measured.

The order check: schedulers sorted by modelled and by measured time agree when no pair is ranked
oppositely where both differences exceed :data:`TIE` (a 5% difference is within what repeated
runs on one host vary by; a pair the model calls a tie is no disagreement).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

__all__ = ["GAP", "TARGET", "TIE", "check_profile", "order_beyond", "time_check", "time_check_md"]

#: Target agreement per scheduler: |modelled / measured − 1| ≤ 25% (issue 17).
TARGET = 0.25
#: Relative difference below which two schedulers' times count as a tie.
TIE = 0.05
#: Modelled difference from which two schedulers' measured order must agree, with no tie band on
#: the measured side (the check on shaped links, where communication dominates).
GAP = 0.10
_MODELLED_PHASES = ("pull", "push", "compute", "allreduce", "wait")


def measured_iteration(run: Mapping[str, Any]) -> float:
    """Mean seconds per steady iteration (after the first) of the phases the model describes
    (schedule left out)."""
    steady = run["measured"].get("steady") or {
        "seconds": run["measured"]["seconds"], "iterations": run["iterations"]}  # fmt: skip
    seconds, iterations = steady["seconds"], steady["iterations"]
    return sum(seconds[p] for p in _MODELLED_PHASES) / iterations if iterations else 0.0


def modelled_iteration(run: Mapping[str, Any], profile: str) -> float:
    """The model's mean seconds per iteration after the first, on ``profile``."""
    estimate = run["time"][profile]
    return estimate.get("steady_iteration_s", estimate["mean_iteration_s"])


def check_profile(runs: Sequence[Mapping[str, Any]]) -> str | None:
    """The measured profile the runs were modelled on: the one whose estimate is not a named
    profile (the spec's ``time_profile``), or None."""
    from heraldbench.platform.timemodel import PROFILES

    for run in runs:
        extra = [name for name in run.get("time", {}) if name not in PROFILES]
        if extra:
            return extra[0]
    return None


def _row(run: Mapping[str, Any], profile: str) -> dict[str, Any]:
    modelled = modelled_iteration(run, profile)
    measured = measured_iteration(run)
    iterations = run["iterations"] or 1
    return {
        "label": run.get("label") or run["scheduler"],
        "scheduler": run["scheduler"],
        "ranks": run["measured"].get("workers"),
        "modelled_s": modelled,
        "measured_s": measured,
        "ratio": modelled / measured if measured > 0 else None,
        "schedule_s": run["measured"]["seconds"]["schedule"] / iterations,
        "iteration_s": run["measured"]["iteration_s"],
    }


def _discordant(rows: list[dict[str, Any]]) -> list[list[str]]:
    """Pairs ranked oppositely by model and measurement, both by more than :data:`TIE`."""
    pairs = []
    for a, b in combinations(rows, 2):
        dm = (a["modelled_s"] - b["modelled_s"]) / min(a["modelled_s"], b["modelled_s"])
        dx = (a["measured_s"] - b["measured_s"]) / min(a["measured_s"], b["measured_s"])
        if abs(dm) > TIE and abs(dx) > TIE and (dm > 0) != (dx > 0):
            pairs.append([a["label"], b["label"]])
    return pairs


def order_beyond(rows: Sequence[Mapping[str, Any]], gap: float = GAP) -> list[list[str]]:
    """Pairs whose modelled times differ by ``gap`` or more and whose measured times are in the
    opposite order (however small the measured difference)."""
    pairs = []
    for a, b in combinations(rows, 2):
        dm = (a["modelled_s"] - b["modelled_s"]) / min(a["modelled_s"], b["modelled_s"])
        if abs(dm) >= gap and (dm > 0) != (a["measured_s"] > b["measured_s"]):
            pairs.append([a["label"], b["label"]])
    return pairs


def time_check(runs: Sequence[Mapping[str, Any]], profile: str | None = None) -> dict[str, Any] | None:
    """Modelled vs measured per run, and whether the speedup order agrees (None: no run was
    measured, or none was modelled on ``profile``, by default the measured profile)."""
    profile = profile or check_profile(runs)
    measured = [r for r in runs if r.get("measured") and profile in r.get("time", {})]
    if profile is None or not measured:
        return None
    rows = [_row(r, profile) for r in measured]
    base = next((r for r in rows if r["scheduler"] == "naive"), rows[0])
    for row in rows:
        row["speedup_modelled"] = base["modelled_s"] / row["modelled_s"] if row["modelled_s"] else None
        row["speedup_measured"] = base["measured_s"] / row["measured_s"] if row["measured_s"] else None
        row["within_target"] = row["ratio"] is not None and abs(row["ratio"] - 1) <= TARGET
    discordant = _discordant(rows)
    return {
        "profile": profile,
        "target": TARGET,
        "tie": TIE,
        "rows": rows,
        "all_within_target": all(r["within_target"] for r in rows),
        "order_agrees": not discordant,
        "discordant_pairs": discordant,
        "order_modelled": [r["label"] for r in sorted(rows, key=lambda r: r["modelled_s"])],
        "order_measured": [r["label"] for r in sorted(rows, key=lambda r: r["measured_s"])],
    }


def time_check_md(check: Mapping[str, Any], title: str = "Modelled vs measured") -> str:
    """The check as a markdown section: one row per scheduler, then the order verdict."""
    lines = [f"## {title} (profile {check['profile']})", "",
             "Iteration time after the first iteration; measured = pull + push + compute + "
             "all-reduce + waiting (the schedule replay is shown apart, not modelled).", "",
             "| scheduler | modelled ms | measured ms | ratio | speedup modelled | "
             "speedup measured | schedule ms | iteration_s ms |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in check["rows"]:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(
            f"| {r['label']} | {r['modelled_s'] * 1e3:.2f} | {r['measured_s'] * 1e3:.2f} | "
            f"{ratio}{'' if r['within_target'] else ' ✗'} | {r['speedup_modelled']:.2f} | "
            f"{r['speedup_measured']:.2f} | {r['schedule_s'] * 1e3:.2f} | "
            f"{r['iteration_s'] * 1e3:.2f} |"
        )  # fmt: skip
    discordant = "; discordant: " + ", ".join(" vs ".join(p) for p in check["discordant_pairs"])
    lines += ["", f"Order modelled: {' < '.join(check['order_modelled'])}  ",
              f"Order measured: {' < '.join(check['order_measured'])}  ",
              f"Order agrees (ties within {check['tie']:.0%}): "
              f"{'yes' if check['order_agrees'] else 'no' + discordant}  ",
              f"All within ±{check['target']:.0%}: {'yes' if check['all_within_target'] else 'no'}",
              ""]  # fmt: skip
    return "\n".join(lines)
