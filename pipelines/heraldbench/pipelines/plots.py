"""Figures of a submission: relative traffic per scheduler, one panel per grid point.

Drawn on :class:`matplotlib.figure.Figure` (Agg canvas, no pyplot), so any thread may draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

__all__ = ["relative_png"]

METRICS = ("pull", "push", "overall")
_COLORS = {"pull": "#4C72B0", "push": "#DD8452", "overall": "#55A868"}


def relative_png(
    panels: Mapping[str, Mapping[str, Sequence[Mapping[str, float | None]]]], out: Path, title: str
) -> Path:
    """Grouped bars of relative pull / push / overall (naive = 1) per scheduler.

    Args:
        panels: point label -> scheduler label -> one relative mapping per seed; a bar is the
            mean over seeds and its whisker spans the seeds' minimum to maximum.
        out: the PNG to write.
        title: the figure's title.
    """
    count = max(1, len(panels))
    widest = max((len(schedulers) for schedulers in panels.values()), default=1)
    fig = Figure(figsize=(max(7.0, 1.1 * widest + 2), 3.6 * count + 0.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(count, 1, squeeze=False)[:, 0])
    for ax, (point, schedulers) in zip(axes, panels.items(), strict=False):
        _bars(ax, schedulers)
        ax.set_title(point, fontsize=9)
    fig.suptitle(title, fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    return out


def _bars(ax, schedulers: Mapping[str, Sequence[Mapping[str, float | None]]]) -> None:
    names = list(schedulers)
    x = np.arange(len(names))
    width = 0.8 / len(METRICS)
    for i, metric in enumerate(METRICS):
        values = [[s[metric] for s in schedulers[n] if s.get(metric) is not None] for n in names]
        means = np.array([np.mean(v) if v else np.nan for v in values])
        low = np.array([means[j] - min(v) if v else 0 for j, v in enumerate(values)])
        high = np.array([max(v) - means[j] if v else 0 for j, v in enumerate(values)])
        spread = np.vstack([low, high]) if any(len(v) > 1 for v in values) else None
        ax.bar(
            x + (i - 1) * width,
            means,
            width,
            yerr=spread,
            capsize=2,
            label=metric,
            color=_COLORS[metric],
        )
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xticks(x, names, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("relative to naive")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
