"""The measured part of the report: where a distributed training's time went, per scheduler.

Written only for results whose runs carry ``measured`` (``train: {backend: distributed}``):
``measured.md`` (a table per scheduler: ranks, iteration time, samples/s, seconds per phase,
bytes over the network next to the stream's rows) and ``measured.png`` (the phases stacked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

__all__ = ["PHASE_NAMES", "write_measured"]

#: Phases of a rank's iteration, in the order they are drawn
#: (heraldbench.platform.distributed._clock).
PHASE_NAMES = ("compute", "pull", "push", "allreduce", "wait", "schedule")
_MB = 1e6


def _label(run: Mapping[str, Any]) -> str:
    return str(run.get("label") or run.get("scheduler"))


def _measured_md(runs: Sequence[Mapping[str, Any]]) -> str:
    headers = ["scheduler", "ranks", "iteration ms", "samples/s",
               *[f"{p} s" for p in PHASE_NAMES], "network MB", "stream MB"]  # fmt: skip
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for run in runs:
        m = run["measured"]
        seconds, moved = m["seconds"], m["bytes"]
        cells = [_label(run), str(m["ranks"]), f"{1e3 * m['iteration_s']:.2f}",
                 f"{m['samples_per_second']:,.0f}", *[f"{seconds[p]:.3f}" for p in PHASE_NAMES],
                 f"{moved['network'] / _MB:.2f}", f"{moved['stream'] / _MB:.2f}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    note = ("Measured on the ranks (mean over training ranks of each rank's total). Network: row "
            "payload sent to other ranks; stream: the decision stream's rows × dim × bytes per "
            "value (a row a worker pulls from its own shard moves no bytes).")  # fmt: skip
    return "# Measured time\n\n" + "\n".join(lines) + "\n\n" + note + "\n"


def _measured_png(runs: Sequence[Mapping[str, Any]], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(runs) + 2), 4))
    labels = [_label(r) for r in runs]
    bottom = [0.0] * len(runs)
    for phase in PHASE_NAMES:
        per_iteration = [1e3 * r["measured"]["seconds"][phase] / max(1, r["iterations"])
                         for r in runs]  # fmt: skip
        ax.bar(labels, per_iteration, bottom=bottom, label=phase)
        bottom = [b + v for b, v in zip(bottom, per_iteration, strict=True)]
    ax.set_ylabel("ms per iteration (mean over ranks)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.set_title("Measured time per iteration, by phase")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_measured(result: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """measured.md and measured.png for the runs that carry ``measured``; nothing otherwise."""
    runs = [r for r in result.get("runs", []) if r.get("measured")]
    if not runs:
        return []
    (out_dir / "measured.md").write_text(_measured_md(runs))
    return [out_dir / "measured.md", _measured_png(runs, out_dir / "measured.png")]
