"""What ``heraldbench tune`` prints: a line (or a progress bar) per trial, and the best trials."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from heraldbench.pipelines.tune.results import TrialRow
from heraldbench.pipelines.tune.study import StudyOutcome
from heraldbench.pipelines.tune.trial import TrialOutcome
from heraldbench.platform.tuning import METRICS

__all__ = ["print_study", "trial_reporter"]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)


def _describe(outcome: TrialOutcome, objectives: list[str]) -> str:
    number = "?" if outcome.number is None else outcome.number
    parts = [f"trial {number} {outcome.state}"]
    parts += [f"{k}={_fmt(v)}" for k, v in outcome.params.items()]
    if outcome.values is not None:
        parts.append("->")
        parts += [f"{name}={_fmt(v)}" for name, v in zip(objectives, outcome.values, strict=True)]
    if not outcome.feasible:
        parts.append("(outside a constraint)")
    if outcome.error:
        parts.append(f"error: {outcome.error}")
    return " ".join(parts)


def trial_reporter(err: Console, bar: Progress | None, total: int, objectives: list[str]):
    """An ``on_trial`` callback: advance ``bar``, or print one line per trial when piped."""
    task = bar.add_task("", total=total) if bar is not None else None

    def done(outcome: TrialOutcome) -> None:
        line = _describe(outcome, objectives)
        if bar is not None:
            bar.update(task, advance=1, description=line)
        else:
            err.print(
                f"{line} ({outcome.seconds:.1f} s, worker {outcome.worker})",
                highlight=False,
                soft_wrap=True,
            )

    return done


def _title(outcome: StudyOutcome) -> str:
    what = "Pareto front" if len(outcome.objectives) > 1 else "best trial"
    return f"{outcome.name}: {what} ({len(outcome.best)} of {len(outcome.rows)} trials)"


def best_table(outcome: StudyOutcome) -> Table:
    """The best trial, or the Pareto front: params, objectives, and a few other metrics."""
    table = Table(title=_title(outcome))
    params = sorted({name for row in outcome.best for name in row.params})
    table.add_column("trial", justify="right")
    for name in params:
        table.add_column(name, justify="right")
    for name, direction in zip(outcome.objectives, outcome.directions, strict=True):
        metric = name.split(".", 1)[0]
        arrow = "↓" if direction == "minimize" else "↑"
        table.add_column(f"{name} {arrow}\n{METRICS[metric].unit}", justify="right")
    table.add_column("overall rows", justify="right")
    for row in outcome.best:
        table.add_row(str(row.number), *_row_cells(row, params))
    return table


def _row_cells(row: TrialRow, params: list[str]) -> list[str]:
    cells = [_fmt(row.params.get(p)) for p in params]
    cells += [_fmt(v) for v in row.values or []]
    overall = row.metrics.get("overall_rows")
    cells.append("-" if overall is None else f"{overall:,.0f}")
    return cells


def print_study(out: Console, outcome: StudyOutcome, hint: str | None) -> None:
    """Counts, the best trial(s), where the tables and plots are, and the MLflow parent run."""
    states = [row.state for row in outcome.rows]
    added = len(outcome.added)
    out.print(
        f"study {outcome.name} in {outcome.storage}: {len(states)} trials "
        f"({outcome.trials_before} before, {added} added in {outcome.seconds:.1f} s): "
        f"{states.count('COMPLETE')} complete, {states.count('PRUNED')} pruned, "
        f"{states.count('FAIL')} failed",
        highlight=False,
        soft_wrap=True,
    )
    if outcome.best:
        out.print(best_table(outcome))
    else:
        out.print("no complete trial meets every constraint yet")
    for kind, paths in (("table", outcome.files), ("plot", outcome.plots)):
        for path in paths.values():
            out.print(f"  {kind:<6} {path}", highlight=False, soft_wrap=True)
    if outcome.target is not None and outcome.url() is not None:
        out.print(f"MLflow run of this study: {outcome.url()}", soft_wrap=True)
    elif outcome.target is not None and hint:
        out.print(f"logged to MLflow ({outcome.target.uri}); open its UI with: {hint}",
                  soft_wrap=True, highlight=False)  # fmt: skip
