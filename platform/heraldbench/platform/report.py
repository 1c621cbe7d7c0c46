"""Reports of one experiment: Herald's Table 1, a full comparison, and their charts.

Input is the JSON document of :meth:`heraldbench.platform.runner.ExperimentResult.to_json`.
Optional per-run fields are used when present:

* ``time``: modelled time, ``{profile name: TimeEstimate.to_json()}`` as
  :func:`heraldbench.platform.timemodel.model_times` builds it (a single ``to_json()`` dict with
  its ``profile`` key is accepted too). Without it the report says "not modelled".
* ``measured``: a distributed training's measured time; the comparison then ends with a
  "Modelled vs measured" table (:mod:`heraldbench.platform.timecheck`).
* ``bound``: the lower bound of the run's partition, ``{"pulls": .., "pushes": .., ...}`` as in
  :class:`heraldbench.platform.bounds.LowerBound` (a ready ``gap`` dict is used as is).

Figures are drawn on :class:`matplotlib.figure.Figure` objects (the Agg canvas, no pyplot and no
display), so reports can be written from worker threads.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from heraldbench.platform.exceptions import DataError
from heraldbench.platform.report_measured import write_measured
from heraldbench.platform.schedulers import BASELINE
from heraldbench.platform.sidebyside import side_by_side_md, write_side_by_side
from heraldbench.platform.timemodel import DEFAULT_PROFILE, get_profile
from heraldbench.platform.units import format_bytes

__all__ = ["PUBLISHED_TABLE1", "TABLE1_ROWS", "plot_series", "write_report"]

METRICS = ("pull", "push", "overall")

#: Herald's slide table (APNet'22 talk; Criteo Kaggle, 8 workers, LRU caches of 1.6 GB, dim 128),
#: relative to naive. The slides are unverified, the
#: Herald row agrees with the abstract's 53.7% reduction.
PUBLISHED_TABLE1: dict[str, dict[str, float]] = {
    "naive": {"pull": 1.0, "push": 1.0, "overall": 1.0},
    "herald-sync-only": {"pull": 1.0, "push": 0.84, "overall": 0.91},
    "herald-partition-only": {"pull": 0.52, "push": 0.85, "overall": 0.69},
    "herald": {"pull": 0.52, "push": 0.42, "overall": 0.46},
}
#: (row title, scheduler kind) of Table 1, in the slide's order.
TABLE1_ROWS = (
    ("naive", "naive"),
    ("on-demand only", "herald-sync-only"),
    ("partition only", "herald-partition-only"),
    ("Herald", "herald"),
)
_COLORS = {"pull": "#4C72B0", "push": "#DD8452", "overall": "#55A868"}


@dataclass(frozen=True)
class _Row:
    """One run as the report shows it."""

    label: str
    run: dict[str, Any]
    time: dict[str, Any] | None
    speedup: float | None
    gap: dict[str, float | None] | None

    @property
    def relative(self) -> dict[str, float | None]:
        return {m: self.run.get("relative", {}).get(m) for m in METRICS}


# ---- reading the result document ---- #


def _caption(result: Mapping[str, Any]) -> str:
    """Experiment name, cluster, cache and dim, for titles."""
    exp = result.get("experiment", {})
    spec = exp.get("spec", {})
    cluster, cache = spec.get("cluster", {}), spec.get("cache", {})
    rows = f"{exp['cache_rows']:,} rows" if exp.get("cache_rows") else "? rows"
    return (
        f"{exp.get('name', spec.get('name', 'experiment'))}: {cluster.get('workers')} workers × "
        f"{cluster.get('batch_size')} samples, cache {rows} ({cache.get('policy', 'lru')}), "
        f"dim {spec.get('embedding_dim')}"
    )


def _labels(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """``kind knob=value ...`` per run; repeated labels get ``#2``, ``#3``."""
    labels, seen = [], {}
    for run in runs:
        knobs = run.get("params", {}).items()
        label = run.get("label") or run["scheduler"] + "".join(
            f" {k}={v}" for k, v in knobs if v is not None
        )
        seen[label] = seen.get(label, 0) + 1
        labels.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return labels


def _time_of(run: Mapping[str, Any], profile: str) -> dict[str, Any] | None:
    time = run.get("time")
    if not time:
        return None
    if "profile" in time:  # a single estimate
        return time if time["profile"] == profile else None
    return time.get(profile)


def _ratio(value: float | None, bound: float | None) -> float | None:
    return None if value is None or not bound else value / bound


def _gap(run: Mapping[str, Any]) -> dict[str, float | None] | None:
    """The run's totals over its lower bound (as LowerBound.gap computes it)."""
    bound = run.get("bound")
    if not bound:
        return None
    if "gap" in bound:
        return bound["gap"]
    totals = run.get("totals", {})
    pulls, pushes = bound.get("pulls"), bound.get("pushes")
    overall = None if pulls is None or pushes is None else pulls + pushes
    return {
        "pull": _ratio(totals.get("pull"), pulls),
        "push": _ratio(totals.get("push"), pushes),
        "overall": _ratio(totals.get("overall"), overall),
    }


def _rows(result: Mapping[str, Any], profile: str) -> list[_Row]:
    runs = result.get("runs", [])
    times = [_time_of(run, profile) for run in runs]
    base = next((t for r, t in zip(runs, times) if r["scheduler"] == BASELINE and t), None)
    rows = []
    for label, run, time in zip(_labels(runs), runs, times):
        speedup = _ratio(base["total_s"], time["total_s"]) if base and time else None
        rows.append(_Row(label, run, time, speedup, _gap(run)))
    return rows


# ---- text tables ---- #


def _fmt(value: float | None, spec: str = ".3f", suffix: str = "") -> str:
    return "—" if value is None else f"{value:{spec}}{suffix}"


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _first_of_kind(rows: Sequence[_Row], kind: str) -> _Row | None:
    return next((row for row in rows if row.run["scheduler"] == kind), None)


def _table1_md(rows: Sequence[_Row], caption: str) -> str:
    headers = ["", *(f"{m} {col}" for m in METRICS for col in ("(ours)", "(published)"))]
    body = []
    for title, kind in TABLE1_ROWS:
        row = _first_of_kind(rows, kind)
        ours = row.relative if row else dict.fromkeys(METRICS)
        cells = [_fmt(v) for m in METRICS for v in (ours[m], PUBLISHED_TABLE1[kind][m])]
        body.append([f"{title} (`{kind}`)" + ("" if row else " — not run"), *cells])
    return (
        f"# Herald Table 1: {caption}\n\n"
        "Row transfers relative to naive (naive = 1; lower is better).\n\n"
        + _md_table(headers, body)
        + "\nPublished: Herald's slide table (Criteo Kaggle, 8 workers, LRU caches of 1.6 GB, "
        "dim 128), from the APNet'22 talk; unverified against the paper "
        "(docs/claims.md).\n"
    )


def _time_cells(row: _Row) -> list[str]:
    if row.time is None:
        return ["not modelled", "—"]
    return [_fmt(row.time["mean_iteration_s"] * 1e3, ".3f", " ms"), _fmt(row.speedup, ".2f", "×")]


def _comparison_md(rows: Sequence[_Row], caption: str, profile: str) -> str:
    headers = ["scheduler", "pull", "push", "overall", "pulls", "pushes", "all-reduce",
               "flush", "bytes", "iteration time", "speedup", "gap to bound"]  # fmt: skip
    body = []
    for row in rows:
        counts, totals = row.run.get("counts", {}), row.run.get("totals", {})
        rel = row.relative
        gap = row.gap["overall"] if row.gap else None
        body.append([
            row.label, *(_fmt(rel[m]) for m in METRICS),
            f"{totals.get('pull', 0):,.0f}", f"{totals.get('push', 0):,.0f}",
            f"{counts.get('allreduce', 0):,.0f}", f"{counts.get('flush_push', 0):,}",
            format_bytes(row.run.get("bytes", {}).get("overall", 0)),
            *_time_cells(row), _fmt(gap, ".2f", "×"),
        ])  # fmt: skip
    hw = get_profile(profile)
    modelled = any(row.time for row in rows)
    time_note = (
        f"Modelled time on profile `{hw.name}` ({hw.source}; compute: {hw.compute.source}); "
        "speedup = naive's modelled time / the run's."
        if modelled
        else "Modelled time: not modelled (no run of this result carries a `time` field)."
    )
    return (
        f"# Comparison: {caption}\n\n"
        "pull / push / overall: relative to naive. pulls, pushes: rows (cluster total). "
        "Gap to bound: overall rows over the lower bound of the run's partition.\n\n"
        + _md_table(headers, body)
        + f"\n{time_note}\n"
    )


_CSV_COLUMNS = (
    "label", "scheduler", "params",
    *(f"relative_{m}" for m in METRICS),
    "miss_pull", "update_pull", "evict_push", "update_push", "flush_push", "allreduce",
    "metadata", *METRICS, *(f"bytes_{m}" for m in METRICS),
    "time_profile", "time_total_s", "time_mean_iteration_s", "time_compute_s", "time_comm_s",
    "speedup", "bound_pulls", "bound_pushes", *(f"gap_{m}" for m in METRICS),
)  # fmt: skip


def _csv_record(row: _Row) -> dict[str, Any]:
    run, time, bound = row.run, row.time or {}, row.run.get("bound") or {}
    record = {"label": row.label, "scheduler": run["scheduler"],
              "params": json.dumps(run.get("params", {}), sort_keys=True)}  # fmt: skip
    record |= {f"relative_{m}": v for m, v in row.relative.items()}
    record |= {k: v for k, v in run.get("counts", {}).items() if k in _CSV_COLUMNS}
    record |= run.get("totals", {})
    record |= {f"bytes_{m}": run.get("bytes", {}).get(m) for m in METRICS}
    record |= {"time_profile": time.get("profile"), "time_total_s": time.get("total_s"),
               "time_mean_iteration_s": time.get("mean_iteration_s"),
               "time_compute_s": time.get("compute_s"), "time_comm_s": time.get("comm_s"),
               "speedup": row.speedup, "bound_pulls": bound.get("pulls"),
               "bound_pushes": bound.get("pushes")}  # fmt: skip
    record |= {f"gap_{m}": (row.gap or {}).get(m) for m in METRICS}
    return {k: ("" if v is None else v) for k, v in record.items()}


def _write_csv(rows: Sequence[_Row], path: Path) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=_CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(_csv_record(row) for row in rows)


# ---- charts ---- #

_BAR_WIDTH = 0.26
_OFFSETS = {m: (i - 1) * _BAR_WIDTH for i, m in enumerate(METRICS)}


def _relative_bars(ax: Axes, groups: Sequence[str], values: Sequence[Mapping]) -> None:
    """Grouped pull/push/overall bars with value labels, and the naive = 1 reference line."""
    x = np.arange(len(groups))
    tallest = 1.0
    for metric, offset in _OFFSETS.items():
        heights = [v.get(metric) for v in values]
        drawn = [math.nan if h is None else h for h in heights]
        bars = ax.bar(x + offset, drawn, _BAR_WIDTH, label=metric, color=_COLORS[metric])
        ax.bar_label(bars, labels=[_fmt(h, ".2f") for h in heights], padding=5, fontsize=8)
        tallest = max([tallest, *(h for h in heights if h is not None)])
    ax.axhline(1.0, color="0.3", linestyle="--", linewidth=1, label="naive = 1")
    ax.set_xticks(x, groups)
    ax.set_ylabel("row transfers relative to naive")
    ax.set_ylim(0, tallest * 1.1)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _published_markers(ax: Axes, kinds: Sequence[str]) -> None:
    for metric, offset in _OFFSETS.items():
        x = np.arange(len(kinds)) + offset
        y = [PUBLISHED_TABLE1[kind][metric] for kind in kinds]
        label = "published (Herald slides)" if metric == "pull" else None
        ax.plot(x, y, "D", markersize=6, mfc="white", mec="black", label=label)


def _finish(fig: Figure, title: str, path: Path) -> Path:
    """Title above, one legend below the axes, then save."""
    fig.suptitle(title, fontsize=10)
    fig.legend(*fig.axes[0].get_legend_handles_labels(), loc="outside lower center",
               ncols=5, fontsize=8, frameon=False)  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    return path


def _table1_png(rows: Sequence[_Row], caption: str, path: Path) -> Path:
    kinds = [kind for _, kind in TABLE1_ROWS]
    found = [_first_of_kind(rows, kind) for kind in kinds]
    groups = [title + ("" if row else "\n(not run)") for (title, _), row in zip(TABLE1_ROWS, found)]
    fig = Figure(figsize=(8.5, 5), layout="constrained")
    ax = fig.subplots()
    _relative_bars(ax, groups, [row.relative if row else {} for row in found])
    _published_markers(ax, kinds)
    ax.set_xlabel("scheduler (Herald's Table 1 rows)")
    return _finish(fig, f"Herald Table 1 — {caption}", path)


def _comparison_png(rows: Sequence[_Row], caption: str, path: Path) -> Path:
    fig = Figure(figsize=(max(8.0, 1.2 * len(rows) + 2), 5.2), layout="constrained")
    ax = fig.subplots()
    _relative_bars(ax, [row.label for row in rows], [row.relative for row in rows])
    ax.tick_params(axis="x", labelrotation=20)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.set_xlabel("scheduler")
    return _finish(fig, f"All schedulers — {caption}", path)


def _rolling_mean(values: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(iteration index, mean of the ``window`` iterations ending there)."""
    window = max(1, min(window, len(values)))
    means = np.convolve(values, np.ones(window) / window, mode="valid")
    return np.arange(window - 1, len(values)), means


def plot_series(
    runs: Mapping[str, Mapping[str, np.ndarray]], out: Path, *, window: int | None = None
) -> Path:
    """Per-iteration pulls and pushes of each run, smoothed, as a PNG at ``out``.

    Args:
        runs: label -> ``RunResult.series`` (pulls = miss + update pulls, pushes = evict +
            update pushes; cluster totals).
        out: the PNG file to write.
        window: rolling-mean width in iterations (default: 1% of the longest run, at least 1).
    """
    longest = max((len(s["miss_pull"]) for s in runs.values()), default=1)
    window = window or max(1, longest // 100)
    fig = Figure(figsize=(9, 6.5), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    for label, series in runs.items():
        pulls = np.asarray(series["miss_pull"], float) + series.get("update_pull", 0)
        pushes = np.asarray(series["evict_push"], float) + series.get("update_push", 0)
        for ax, values in zip(axes, (pulls, pushes)):
            ax.plot(*_rolling_mean(values, window), label=label, linewidth=1.2)
    for ax, what in zip(axes, ("pulls (miss + update)", "pushes (evict + update)")):
        ax.set_ylabel(f"{what}\nrows per iteration")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[1].set_xlabel("iteration (cluster totals)")
    smoothing = f"rolling mean over {window} iterations" if window > 1 else "unsmoothed"
    return _finish(fig, f"Per-iteration traffic per scheduler, {smoothing}", out)


def _time_check_md(result: Mapping[str, Any], profile: str) -> str:
    """The "Modelled vs measured" section when runs carry ``measured`` (a distributed training):
    on the measured profile the run was modelled on, else on the report's profile."""
    from heraldbench.platform.timecheck import time_check, time_check_md

    check = result.get("time_check") or time_check(result["runs"], None) or time_check(
        result["runs"], profile)  # fmt: skip
    return "" if check is None else "\n" + time_check_md(check)


# ---- entry points ---- #


def write_report(
    result: Mapping[str, Any], out_dir: Path, *, profile: str = DEFAULT_PROFILE
) -> list[Path]:
    """Write Table 1, the comparison and their charts for ``result`` into ``out_dir``.

    Args:
        result: ``ExperimentResult.to_json()``, optionally with per-run ``time`` and ``bound``.
        out_dir: created if missing.
        profile: the hardware profile whose modelled time is shown.

    Returns:
        The files written: table1.md, comparison.md, comparison.csv, table1.png, comparison.png,
        measured.md, measured.png for a distributed training, and side_by_side.md,
        side_by_side.csv where the result holds placements (comparison.md then ends with their
        table on ``profile``).

    Raises:
        UnknownNameError: unknown profile.
        DataError: the result has no runs.
    """
    profile = get_profile(profile).name
    if not result.get("runs"):
        raise DataError("the result has no runs to report")
    caption, rows = _caption(result), _rows(result, profile)
    out_dir.mkdir(parents=True, exist_ok=True)
    texts = {
        "table1.md": _table1_md(rows, caption),
        "comparison.md": _comparison_md(rows, caption, profile) + _time_check_md(result, profile)
        + side_by_side_md(dict(result), profile),
    }
    written = []
    for name, text in texts.items():
        (out_dir / name).write_text(text)
        written.append(out_dir / name)
    _write_csv(rows, out_dir / "comparison.csv")
    written.append(out_dir / "comparison.csv")
    written.append(_table1_png(rows, caption, out_dir / "table1.png"))
    written.append(_comparison_png(rows, caption, out_dir / "comparison.png"))
    return written + write_measured(result, out_dir) + write_side_by_side(result, out_dir)
