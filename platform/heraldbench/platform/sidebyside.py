"""Schedulers and placements in one comparison: bytes per iteration per tier and modelled
communication time per iteration under each profile, relative to the spec's ``baseline``.

A placement's figures are its accounting's (:mod:`heraldbench.platform.placing`). A cache
scheduler's come from its counts: the rows it moves (``Counts.bytes``' ``overall``: pulls,
pushes and all-reduced rows, fp32 rows of the embedding dim; the final flush is not per
iteration) over its iterations, all on the **inter-host** tier, because the time model's named
profiles model a worker's link to a parameter server off the workers' hosts
(:mod:`heraldbench.platform.timemodel`), which carries its all-reduce too; its communication
time is the time model's ``comm_s`` per iteration, on the same profiles.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from heraldbench.platform.comparison import fitted_table

__all__ = ["TIERS", "compare", "placement_row", "scheduler_row", "side_by_side",
           "side_by_side_table", "write_side_by_side"]

TIERS = ("intra_host", "inter_host")


def scheduler_row(run: dict[str, Any]) -> dict[str, Any]:
    """A scheduler run's row, from its JSON (``RunResult.to_json``)."""
    iterations = max(int(run.get("iterations") or 0), 1)
    times = {name: t for name, t in (run.get("time") or {}).items() if not t.get("overlap")}
    return {
        "label": run.get("label") or run["scheduler"], "kind": run["scheduler"],
        "paradigm": "scheduler",
        "bytes_per_iteration": {"intra_host": 0.0,
                                "inter_host": run["bytes"]["overall"] / iterations},
        "comm_ms_per_iteration": {name: t["comm_s"] / iterations * 1e3 for name, t in times.items()},
    }


def placement_row(result: dict[str, Any]) -> dict[str, Any]:
    """A placement run's row, from its JSON (``placing.place_entry``)."""
    return {
        "label": result["label"], "kind": result["placement"], "paradigm": "placement",
        "bytes_per_iteration": dict(result["bytes_per_iteration"]),
        "comm_ms_per_iteration": dict(result["comm_ms_per_iteration"]),
        "device_memory_max_bytes": result["device_memory_max_bytes"],
        "load_balance": result["load_balance"],
    }


def _ratio(value: float | None, base: float | None) -> float | None:
    return None if value is None or not base else value / base


def compare(rows: list[dict[str, Any]], baseline: str) -> list[dict[str, Any]]:
    """``rows`` with ``relative`` figures against the row labelled ``baseline`` (else the first
    of that kind): total bytes and each profile's time over the baseline's; None without it."""
    base = next((r for r in rows if r["label"] == baseline), None) or \
        next((r for r in rows if r["kind"] == baseline), None)
    out = []
    for row in rows:
        total = sum(row["bytes_per_iteration"].values())
        base_total = sum(base["bytes_per_iteration"].values()) if base else None
        base_ms = base["comm_ms_per_iteration"] if base else {}
        out.append(row | {"baseline": row is base, "relative": {
            "bytes": _ratio(total, base_total),
            "comm": {p: _ratio(ms, base_ms.get(p)) for p, ms in row["comm_ms_per_iteration"].items()},
        }})
    return out


def side_by_side(runs: Iterable[dict[str, Any]], placements: Iterable[dict[str, Any]],
                 baseline: str) -> list[dict[str, Any]]:
    """The comparison of scheduler runs' and placement runs' JSON."""
    rows = [scheduler_row(r) for r in runs] + [placement_row(p) for p in placements]
    return compare(rows, baseline)


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}×"


def _cells(rows: list[dict[str, Any]]) -> tuple[dict[str, list[str]], tuple[str, ...]]:
    """Every column's cells (header: a cell per row), and the columns by priority."""
    profiles = list(dict.fromkeys(p for r in rows for p in r["comm_ms_per_iteration"]))
    cells: dict[str, list[str]] = {
        "scheduler / placement": [r["label"] for r in rows],
        "paradigm": [r["paradigm"] for r in rows],
        "intra MB/it": [f"{r['bytes_per_iteration']['intra_host'] / 1e6:.3f}" for r in rows],
        "inter MB/it": [f"{r['bytes_per_iteration']['inter_host'] / 1e6:.3f}" for r in rows],
        "× bytes": [_times(r["relative"]["bytes"]) for r in rows],
    }
    for p in profiles:
        cells[f"{p} ms/it"] = [_ms(r["comm_ms_per_iteration"].get(p)) for r in rows]
        cells[f"× {p}"] = [_times(r["relative"]["comm"].get(p)) for r in rows]
    priority = ("scheduler / placement", "inter MB/it", "intra MB/it", "× bytes",
                *(h for p in profiles for h in (f"{p} ms/it", f"× {p}")), "paradigm")
    return cells, priority


def side_by_side_table(rows: list[dict[str, Any]], title: str, baseline: str,
                       width: int | None = None) -> list[Any]:
    """One table of every row, fitted to ``width`` (``comparison.fitted_table``): MB per
    iteration per tier, and ms per iteration per profile, each with its ratio to the baseline;
    the first profile's columns are kept before the others'."""
    cells, priority = _cells(rows)
    return fitted_table(f"{title}: relative to {baseline}", cells, priority, width,
                        left=("scheduler / placement", "paradigm"))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def write_side_by_side(result: dict[str, Any], out_dir: Path) -> list[Path]:
    """``side_by_side.md`` of a result holding placements (``ExperimentResult.to_json``'s
    ``side_by_side``): the table above as Markdown, every profile's column; else nothing."""
    comparison = result.get("side_by_side") or {}
    rows = comparison.get("rows") or []
    if not any(r["paradigm"] == "placement" for r in rows):
        return []
    baseline = comparison.get("baseline", "naive")
    cells, _ = _cells(rows)
    lines = [f"# Schedulers and placements, relative to {baseline}", "",
             "| " + " | ".join(cells) + " |", "|" + "---|" * len(cells)]
    lines += ["| " + " | ".join(column[i] for column in cells.values()) + " |"
              for i in range(len(rows))]
    path = out_dir / "side_by_side.md"
    path.write_text("\n".join(lines) + "\n")
    return [path]
