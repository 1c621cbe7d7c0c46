"""``calibrate --check --report DIR``: the round trip as tables and pictures."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from heraldbench.platform.data.workload.schema import WorkloadProfile
from heraldbench.platform.workload_check import MRC_TOLERANCE, TRAFFIC_TOLERANCE, CheckResult

__all__ = ["check_markdown", "write_check_report"]


def write_check_report(result: CheckResult, profile: WorkloadProfile, folder: Path) -> list[Path]:
    """check.md, check.csv, mrc.png (both miss-ratio curves) and schedulers.png (real and
    synthetic relative overall traffic per scheduler, one panel per shape)."""
    folder.mkdir(parents=True, exist_ok=True)
    markdown = folder / "check.md"
    markdown.write_text(check_markdown(result, profile))
    table = folder / "check.csv"
    with table.open("w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(result.rows[0]) if result.rows else ["-"])
        writer.writeheader()
        writer.writerows(result.rows)
    return [markdown, table, _mrc_figure(result, folder / "mrc.png"),
            _traffic_figure(result, folder / "schedulers.png")]  # fmt: skip


def check_markdown(result: CheckResult, profile: WorkloadProfile) -> str:
    lines = [
        f"# Round trip of profile `{profile.name}`",
        "",
        f"Real trace: {profile.provenance.source} ({result.samples:,} samples, "
        f"{result.distinct_rows:,} distinct rows). Synthetic: the profile generated with as many "
        "samples. Relative traffic is each trace's own against its own naive.",
        "",
        f"Worst difference: traffic {result.worst_traffic:.3f} (target ±{TRAFFIC_TOLERANCE}), "
        f"miss-ratio curve {result.worst_mrc:.3f} (target ±{MRC_TOLERANCE}): "
        f"**{'met' if result.met else 'not met'}**.",
        "",
        "| shape | batch | scheduler | total | real | synthetic | difference |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result.rows:
        flag = "" if abs(r["difference"]) <= TRAFFIC_TOLERANCE else " ✗"
        lines.append(
            f"| W={r['workers']}, cache {r['cache_fraction']:.0%} ({r['cache_rows']:,} rows) | "
            f"{r['batch_size']} | {r['scheduler']} | {r['total']} | {r['real']:.3f} | "
            f"{r['synthetic']:.3f} | {r['difference']:+.3f}{flag} |"
        )
    lines += ["", "| LRU cache (share of distinct rows) | real miss ratio | synthetic | difference |",
              "|---|---|---|---|"]  # fmt: skip
    for key, real in result.mrc_real.items():
        syn = result.mrc_synthetic[key]
        lines.append(f"| {float(key):.0%} | {real:.3f} | {syn:.3f} | {syn - real:+.3f} |")
    if result.lengths:
        lines += ["", "| ragged table | real ids a sample | synthetic | largest CDF difference |",
                  "|---|---|---|---|"]  # fmt: skip
        lines += [f"| {r['table']} | {r['real_mean']:.3f} | {r['synthetic_mean']:.3f} | "
                  f"{r['max_cdf_difference']:.4f} |" for r in result.lengths]
    return "\n".join(lines) + "\n"


def _mrc_figure(result: CheckResult, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [float(k) * 100 for k in result.mrc_real]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(x, list(result.mrc_real.values()), "o-", label="real")
    ax.plot(x, list(result.mrc_synthetic.values()), "s--", label="synthetic (profile)")
    ax.set_xscale("log")
    ax.set_xlabel("LRU cache, % of the real trace's distinct rows")
    ax.set_ylabel("miss ratio")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("Miss-ratio curve, real vs synthetic")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _traffic_figure(result: CheckResult, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    shapes = sorted({(r["workers"], r["cache_fraction"]) for r in result.rows})
    fig, axes = plt.subplots(1, max(len(shapes), 1), figsize=(5 * max(len(shapes), 1), 4.2),
                             squeeze=False)  # fmt: skip
    for ax, (workers, fraction) in zip(axes[0], shapes, strict=False):
        rows = [r for r in result.rows if (r["workers"], r["cache_fraction"]) == (workers, fraction)
                and r["total"] == "overall"]  # fmt: skip
        names = [r["scheduler"] for r in rows]
        y = np.arange(len(rows))
        ax.barh(y - 0.2, [r["real"] for r in rows], 0.4, label="real")
        ax.barh(y + 0.2, [r["synthetic"] for r in rows], 0.4, label="synthetic")
        ax.set_yticks(y, names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")  # BagPipe's all-reduce puts it at several times naive's traffic
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.axvline(1.0, color="grey", lw=0.8)
        ax.set_title(f"W={workers}, cache {fraction:.0%}")
        ax.set_xlabel("overall traffic / naive's")
    axes[0][0].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
