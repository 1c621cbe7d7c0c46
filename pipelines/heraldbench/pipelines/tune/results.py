"""A study's trials as rows, its best trials (a Pareto front with several objectives), and the
files that hold them: ``trials.csv``, ``pareto.csv`` (several objectives) and ``best.json``."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["TrialRow", "best_rows", "dominates", "rows_of", "write_tables"]


@dataclass(frozen=True)
class TrialRow:
    """One trial as stored in the study.

    Attributes:
        state: COMPLETE, PRUNED, FAIL or RUNNING (Optuna's names).
        values: objective values (a pruned trial's: its last reported value, if any).
        metrics: everything the trial measured (:mod:`.measure`).
        constraints: violation per constraint (<= 0 holds); feasible: all of them hold.
    """

    number: int
    state: str
    params: dict[str, Any]
    values: list[float] | None
    metrics: dict[str, float] = field(default_factory=dict)
    constraints: dict[str, float] = field(default_factory=dict)
    feasible: bool = True
    error: str | None = None
    worker: str | None = None
    run_id: str | None = None
    seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "state": self.state,
            "params": self.params,
            "values": self.values,
            "feasible": self.feasible,
            "constraints": self.constraints,
            "metrics": self.metrics,
            "error": self.error,
            "mlflow_run_id": self.run_id,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
        }

    def best_json(self) -> dict[str, Any]:
        return {"number": self.number, "params": self.params, "values": self.values}


def rows_of(study: Any) -> list[TrialRow]:
    """Every trial of an Optuna study, in trial order."""
    rows = []
    for trial in study.get_trials(deepcopy=False):
        attrs = trial.user_attrs
        rows.append(
            TrialRow(
                number=trial.number,
                state=trial.state.name,
                params=dict(trial.params),
                values=list(trial.values) if trial.values is not None else None,
                metrics=dict(attrs.get("metrics") or {}),
                constraints=dict(trial.constraints),
                feasible=all(v <= 0 for v in trial.constraints.values()),
                error=attrs.get("error"),
                worker=attrs.get("worker"),
                run_id=attrs.get("mlflow_run_id"),
                seconds=trial.duration.total_seconds() if trial.duration else None,
            )
        )
    return rows


def _signed(values: list[float], directions: list[str]) -> list[float]:
    """Values as quantities to minimise."""
    return [v if d == "minimize" else -v for v, d in zip(values, directions, strict=True)]


def dominates(a: list[float], b: list[float], directions: list[str]) -> bool:
    """``a`` is at least as good as ``b`` in every objective and better in one."""
    sa, sb = _signed(a, directions), _signed(b, directions)
    return all(x <= y for x, y in zip(sa, sb, strict=True)) and sa != sb


def best_rows(rows: list[TrialRow], directions: list[str]) -> list[TrialRow]:
    """The feasible complete trials no other such trial dominates (one objective: the best),
    ordered by the first objective. Trials with equal values are all kept."""
    done = [r for r in rows if r.state == "COMPLETE" and r.feasible and r.values is not None]
    front = [r for r in done if not any(dominates(o.values, r.values, directions) for o in done)]
    return sorted(front, key=lambda r: (_signed(r.values, directions), r.number))


def write_tables(
    rows: list[TrialRow], best: list[TrialRow], objectives: list[str], folder: Path
) -> dict[str, Path]:
    """``trials.csv``, ``best.json`` and (several objectives) ``pareto.csv`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"trials": _csv(rows, objectives, folder / "trials.csv")}
    if len(objectives) > 1:
        files["pareto"] = _csv(best, objectives, folder / "pareto.csv")
    path = folder / "best.json"
    path.write_text(
        json.dumps({"objectives": objectives, "best": [r.to_json() for r in best]}, indent=1)
    )
    files["best"] = path
    return files


def _csv(rows: list[TrialRow], objectives: list[str], path: Path) -> Path:
    params = sorted({name for row in rows for name in row.params})
    metrics = sorted({name for row in rows for name in row.metrics} - set(objectives))
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["trial", "state", "feasible", *params, *objectives, *metrics, "error"])
        for row in rows:
            values = row.values if row.values is not None else [None] * len(objectives)
            writer.writerow(
                [row.number, row.state, row.feasible]
                + [row.params.get(p) for p in params]
                + list(values)
                + [row.metrics.get(m) for m in metrics]
                + [row.error or ""]
            )
    return path
