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

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from heraldbench.platform.comparison import fitted_table

__all__ = ["TIERS", "compare", "placement_row", "scheduler_row", "side_by_side",
           "side_by_side_md", "side_by_side_table", "write_side_by_side"]

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
        "fallback": result.get("fallback"),
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


def _markdown(cells: dict[str, list[str]], count: int) -> list[str]:
    lines = ["| " + " | ".join(cells) + " |", "|" + "---|" * len(cells)]
    return lines + ["| " + " | ".join(column[i] for column in cells.values()) + " |"
                    for i in range(count)]  # fmt: skip


def _placed(result: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The comparison's rows (none without a placement among them) and its baseline."""
    comparison = result.get("side_by_side") or {}
    rows = comparison.get("rows") or []
    if not any(r["paradigm"] == "placement" for r in rows):
        return [], ""
    return rows, comparison.get("baseline", "naive")


def _memory_cells(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """A placement's fullest device and load balance (a scheduler's cache is in the comparison
    above it)."""
    memory = [r.get("device_memory_max_bytes") for r in rows]
    balance = [r.get("load_balance") for r in rows]
    return {"device MB": ["-" if m is None else f"{m / 1e6:.3f}" for m in memory],
            "load balance": ["-" if b is None else f"{b:.3f}" for b in balance]}  # fmt: skip


def _fallback_notes(rows: list[dict[str, Any]]) -> list[str]:
    """A line for each placement whose plan is not the one it chose from the trace."""
    notes = [f"- `{r['label']}`: {r['fallback']}" for r in rows if r.get("fallback")]
    return ["", *notes] if notes else []


def side_by_side_md(result: dict[str, Any], profile: str) -> str:
    """A section of the report's comparison.md: every scheduler and placement of a result
    holding placements, relative to its baseline, with ``profile``'s communication time; else
    "" (a result of schedulers only)."""
    rows, baseline = _placed(result)
    if not rows:
        return ""
    cells, _ = _cells(rows)
    keep = ("scheduler / placement", "paradigm", "inter MB/it", "intra MB/it", "× bytes",
            f"{profile} ms/it", f"× {profile}")  # fmt: skip
    shown = {k: v for k, v in cells.items() if k in keep} | _memory_cells(rows)
    note = ("Bytes per iteration on each tier and modelled communication time per iteration on "
            f"`{profile}`; a scheduler's traffic is all inter-host (docs/sharding.md).")
    lines = [f"\n## Schedulers and placements, relative to {baseline}", "", note, "",
             *_markdown(shown, len(rows)), *_fallback_notes(rows)]  # fmt: skip
    return "\n".join(lines) + "\n"


def write_side_by_side(result: dict[str, Any], out_dir: Path) -> list[Path]:
    """``side_by_side.md`` (every profile's column) and ``side_by_side.csv`` (every figure,
    one row each) of a result holding placements (``ExperimentResult.to_json``'s
    ``side_by_side``); else nothing."""
    rows, baseline = _placed(result)
    if not rows:
        return []
    cells, _ = _cells(rows)
    lines = [f"# Schedulers and placements, relative to {baseline}", "",
             *_markdown(cells | _memory_cells(rows), len(rows)), *_fallback_notes(rows)]  # fmt: skip
    path = out_dir / "side_by_side.md"
    path.write_text("\n".join(lines) + "\n")
    return [path, _write_csv(rows, out_dir / "side_by_side.csv")]


def _write_csv(rows: list[dict[str, Any]], path: Path) -> Path:
    """One line per row: label, kind, paradigm, bytes per tier, ms per profile, the ratios to
    the baseline, device memory and load balance (blank where a row has none)."""
    profiles = list(dict.fromkeys(p for r in rows for p in r["comm_ms_per_iteration"]))
    columns = ["label", "kind", "paradigm", "baseline", *(f"{t}_bytes_per_iteration" for t in TIERS),
               "relative_bytes", *(f"comm_ms_per_iteration_{p}" for p in profiles),
               *(f"relative_comm_{p}" for p in profiles), "device_memory_max_bytes",
               "load_balance"]  # fmt: skip
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            record = {"label": row["label"], "kind": row["kind"], "paradigm": row["paradigm"],
                      "baseline": row["baseline"], "relative_bytes": row["relative"]["bytes"],
                      "device_memory_max_bytes": row.get("device_memory_max_bytes"),
                      "load_balance": row.get("load_balance")}  # fmt: skip
            record |= {f"{t}_bytes_per_iteration": row["bytes_per_iteration"][t] for t in TIERS}
            for p in profiles:
                record[f"comm_ms_per_iteration_{p}"] = row["comm_ms_per_iteration"].get(p)
                record[f"relative_comm_{p}"] = row["relative"]["comm"].get(p)
            writer.writerow({k: "" if v is None else v for k, v in record.items()})
    return path
