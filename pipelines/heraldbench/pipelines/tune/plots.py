"""A study's figures: optimisation history, parameter importances and the Pareto front.

Drawn on :class:`matplotlib.figure.Figure` (Agg canvas, no pyplot, like every figure of the
project) rather than with ``optuna.visualization.matplotlib``, which draws through pyplot's
global state: a study may be summarised on a worker thread of the service. The importances are
Optuna's fANOVA (on scikit-learn, which MLflow already requires), seeded with the sampler's seed
so that a study's figure is reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from heraldbench.pipelines.tune.results import TrialRow, best_rows
from heraldbench.platform.tuning import METRICS

__all__ = ["history_png", "importances_png", "pareto_png"]

_DONE, _INFEASIBLE, _PRUNED, _BEST = "#4C72B0", "#9A9A9A", "#DD8452", "#C44E52"


def _label(objective: str) -> str:
    metric = objective.split(".", 1)[0]
    unit = METRICS[metric].unit if metric in METRICS else ""
    return f"{objective} ({unit})" if unit else objective


def _save(fig: Figure, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    return out


def history_png(
    rows: Sequence[TrialRow], objectives: list[str], directions: list[str], out: Path, title: str
) -> Path:
    """Each objective by trial number, with the best feasible value so far."""
    fig = Figure(figsize=(7.5, 2.6 * len(objectives) + 0.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(objectives), 1, sharex=True, squeeze=False)[:, 0])
    for i, ax in enumerate(axes):
        _history_panel(ax, rows, i, directions[i])
        ax.set_ylabel(_label(objectives[i]), fontsize=8)
    axes[-1].set_xlabel("trial")
    failed = sum(r.state == "FAIL" for r in rows)
    fig.suptitle(title + (f" ({failed} failed trials not shown)" if failed else ""), fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=4, fontsize=8, frameon=False)
    return _save(fig, out)


def _history_panel(ax: Any, rows: Sequence[TrialRow], i: int, direction: str) -> None:
    def points(keep) -> tuple[list[int], list[float]]:
        chosen = [r for r in rows if r.values is not None and keep(r)]
        return [r.number for r in chosen], [r.values[i] for r in chosen]

    done = points(lambda r: r.state == "COMPLETE" and r.feasible)
    ax.scatter(*done, s=18, color=_DONE, label="trial", zorder=3)
    infeasible = points(lambda r: r.state == "COMPLETE" and not r.feasible)
    if infeasible[0]:
        ax.scatter(*infeasible, s=22, marker="x", color=_INFEASIBLE, label="outside a constraint")
    pruned = points(lambda r: r.state == "PRUNED")
    if pruned[0]:
        ax.scatter(*pruned, s=22, marker="v", color=_PRUNED, label="pruned (last report)")
    if done[0]:
        pick = np.minimum if direction == "minimize" else np.maximum
        ax.step(done[0], pick.accumulate(done[1]), where="post", color=_BEST, label="best so far")
    ax.grid(alpha=0.3)
    ax.set_axisbelow(True)


def importances_png(
    study: Any, objectives: list[str], seed: int, out: Path, title: str
) -> Path | None:
    """Share of each objective's variance explained by each parameter (fANOVA); None when the
    study has too few complete trials with differing values to tell."""
    importances = []
    for i in range(len(objectives)):
        found = _importances(study, i, seed)
        if found is None:
            return None
        importances.append(found)
    params = sorted(importances[0], key=lambda p: -max(imp.get(p, 0.0) for imp in importances))
    fig = Figure(figsize=(7.0, 1.0 + 0.55 * len(params) * len(objectives)), layout="constrained")
    ax = fig.subplots()
    height = 0.8 / len(objectives)
    y = np.arange(len(params))
    for i, objective in enumerate(objectives):
        values = [importances[i].get(p, 0.0) for p in params]
        bars = ax.barh(
            y + (i - (len(objectives) - 1) / 2) * height, values, height, label=objective
        )
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=2)
    ax.set_yticks(y, params, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("importance (share of the objective's variance, fANOVA)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    fig.suptitle(title, fontsize=10)
    return _save(fig, out)


def _importances(study: Any, index: int, seed: int) -> dict[str, float] | None:
    import optuna

    complete = [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]
    if len(complete) < 2 or len({tuple(t.values) for t in complete}) < 2:
        return None
    try:
        found = optuna.importance.get_param_importances(
            study,
            evaluator=optuna.importance.FanovaImportanceEvaluator(seed=seed),
            target=lambda trial: trial.values[index],
        )
    except (RuntimeError, ValueError):  # e.g. no parameter took two values yet
        return None
    return {name: float(value) for name, value in found.items()}


def pareto_png(
    rows: Sequence[TrialRow],
    objectives: list[str],
    directions: list[str],
    out: Path,
    *,
    colour_by: str | None,
    log_colour: bool,
    title: str,
) -> Path:
    """The first objective against the second, every trial coloured by ``colour_by``; the
    non-dominated feasible trials are outlined, numbered and joined."""
    fig = Figure(figsize=(8.0, 5.2), layout="constrained")
    ax = fig.subplots()
    done = [r for r in rows if r.state == "COMPLETE" and r.values is not None]
    feasible = [r for r in done if r.feasible]
    infeasible = [r for r in done if not r.feasible]
    colours = _numeric([r.params.get(colour_by) for r in feasible] if colour_by else None)
    if colours is not None:
        scatter = ax.scatter(*_xy(feasible), s=30, c=colours, cmap="viridis", zorder=3,
                             norm=_norm(colours, log_colour))  # fmt: skip
        _colorbar(fig, ax, scatter, colours, colour_by)
    elif feasible:
        ax.scatter(*_xy(feasible), s=30, color=_DONE, zorder=3, label="trial")
    if infeasible:
        ax.scatter(
            *_xy(infeasible), s=30, marker="x", color=_INFEASIBLE, label="outside a constraint"
        )
    front = sorted(best_rows(list(rows), directions), key=lambda r: r.values[1])
    fx, fy = _xy(front)
    ax.plot(fx, fy, drawstyle="steps-post", color=_BEST, linewidth=1.2, label="Pareto front")
    ax.scatter(fx, fy, s=90, facecolors="none", edgecolors=_BEST, linewidths=1.5, zorder=4)
    for row in _spaced(front, done):
        ax.annotate(f"#{row.number}", (row.values[1], row.values[0]), fontsize=7,
                    xytext=(4, 4), textcoords="offset points")  # fmt: skip
    ax.set_xlabel(_label(objectives[1]))
    ax.set_ylabel(_label(objectives[0]))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False)
    more = f"; {', '.join(objectives[2:])} not shown" if len(objectives) > 2 else ""
    fig.suptitle(f"{title}: {len(front)} Pareto-optimal of {len(done)} trials{more}", fontsize=10)
    return _save(fig, out)


def _spaced(front: list[TrialRow], done: list[TrialRow], gap: float = 0.04) -> list[TrialRow]:
    """Front points to number: each at least ``gap`` of the axes' spans from the last one
    numbered, so that labels do not overprint (pareto.csv lists them all)."""
    xs, ys = _xy(done)
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    chosen: list[TrialRow] = []
    for row in front:
        last = chosen[-1] if chosen else None
        if (
            last is None
            or max(
                abs(row.values[1] - last.values[1]) / span_x,
                abs(row.values[0] - last.values[0]) / span_y,
            )
            >= gap
        ):
            chosen.append(row)
    return chosen


def _colorbar(fig: Figure, ax: Any, scatter: Any, values: list[float], label: str) -> None:
    """A colour bar labelled with the values trials took (when few), in plain numbers."""
    distinct = sorted(set(values))
    bar = fig.colorbar(scatter, ax=ax, label=label, ticks=distinct if len(distinct) <= 10 else None)
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    bar.ax.yaxis.set_minor_formatter(NullFormatter())


def _xy(rows: Sequence[TrialRow]) -> tuple[list[float], list[float]]:
    return [r.values[1] for r in rows], [r.values[0] for r in rows]


def _numeric(values: list[Any] | None) -> list[float] | None:
    if not values or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
    ):
        return None
    return [float(v) for v in values]


def _norm(numbers: list[float], log: bool) -> Normalize:
    low, high = min(numbers), max(numbers)
    if log and low > 0 and high > low:
        return LogNorm(low, high)
    return Normalize(low, high if high > low else low + 1)
