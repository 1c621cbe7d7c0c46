"""Figures derived from stored run results: relative traffic, accuracy metrics, short series.

Relative figures divide by naive of the same experiment, point, seed and action. They are
computed when a run is read, not stored by its task: the baseline and the other runs of a group
finish in any order on different workers, and a figure derived on read is never stale.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from heraldbench.pipelines.relative import Group, baselines, group_of, relative_or_none
from heraldbench.platform.metrics import Counts
from heraldbench.platform.sidebyside import side_by_side

__all__ = [
    "SERIES_POINTS",
    "accuracy_metrics",
    "downsample",
    "json_safe",
    "mlflow_link",
    "relative_figures",
    "short_series",
    "side_by_side_figures",
]

#: Points per series at most in API responses (docs/api.md).
SERIES_POINTS = 500


def json_safe(value: Any) -> Any:
    """``value`` with NaN and infinities as None and numpy values as plain ones.

    Strict JSON (PostgreSQL's JSON type, Starlette's responses) refuses non-finite numbers.
    """
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def mlflow_link(
    ui_base: str | None, uri: str | None, experiment_id: str | None, run_id: str | None
) -> str | None:
    """The MLflow UI address of a run: ``ui_base``, else the tracking server; None when no UI
    serves the store (a link that would not open is no link)."""
    if not (uri and experiment_id and run_id):
        return None
    base = ui_base or (uri if uri.startswith("http") else None)
    if base is None:
        return None
    return f"{base.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"


def downsample(values: Iterable[float], cap: int = SERIES_POINTS) -> list[float]:
    """``values`` as at most ``cap`` means of equal windows (all of them when short enough)."""
    array = np.asarray(list(values), dtype=np.float64)
    if len(array) <= cap:
        return [float(v) for v in array]
    stride = -(-len(array) // cap)
    starts = np.arange(0, len(array), stride)
    means = np.add.reduceat(array, starts) / np.diff(np.append(starts, len(array)))
    return [float(v) for v in means]


def short_series(series: Mapping[str, Any]) -> dict[str, list[float]]:
    """Cluster-wide pull and push per iteration (and loss, when trained), downsampled."""
    if not series:
        return {}

    def column(*names: str) -> np.ndarray | None:
        present = [np.asarray(series[n], dtype=np.float64) for n in names if n in series]
        return sum(present[1:], present[0]) if present else None

    out = {}
    for name, parts in (
        ("pull", ("miss_pull", "update_pull")),
        ("push", ("evict_push", "update_push")),
        ("loss", ("loss",)),
    ):
        values = column(*parts)
        if values is not None:
            out[name] = downsample(values)
    return out


def accuracy_metrics(result: Mapping[str, Any] | None) -> dict[str, float | None] | None:
    """AUC, log loss and accuracy of a trained run (None for a simulated one)."""
    if not result:
        return None
    source = result.get("accuracy") if isinstance(result.get("accuracy"), Mapping) else None
    source = source or result.get("metrics")
    if not isinstance(source, Mapping):
        return None
    logloss = source.get("logloss", source.get("log_loss"))
    return {"auc": source.get("auc"), "logloss": logloss, "accuracy": source.get("accuracy")}


def relative_figures(runs: Iterable[Any]) -> dict[int, dict[str, float | None]]:
    """Relative pull/push/overall of each run (by id) against naive of its group.

    ``runs`` are rows with ``id``, ``action``, ``point_index``, ``seed``, ``scheduler``,
    ``status`` and ``result``; runs without counts, or without a finished baseline, get None.
    """
    counted = [(run, _counts(run)) for run in runs]
    naive = baselines((_group(run), run.scheduler, counts) for run, counts in counted
                      if counts is not None)  # fmt: skip
    return {run.id: relative_or_none(counts, naive.get(_group(run))) for run, counts in counted}


def _group(run: Any) -> Group:
    return group_of(run.point_index, run.seed, run.action)


def _counts(run: Any) -> Counts | None:
    if run.status != "succeeded" or not run.result or "counts" not in run.result:
        return None
    known = {k: v for k, v in run.result["counts"].items() if k in Counts.__dataclass_fields__}
    return Counts(**known)


def side_by_side_figures(runs: Iterable[Any], baseline: str) -> dict[int, dict[str, Any]]:
    """Each succeeded run's side-by-side row (``platform.sidebyside``) by id, in the groups of
    (point, seed) that hold placements, relative to ``baseline`` of the same group."""
    groups: dict[tuple[int, int], list[Any]] = {}
    for run in runs:
        if run.status == "succeeded" and run.result and ("bytes" in run.result or
                                                         "placement" in run.result):
            groups.setdefault((run.point_index, run.seed), []).append(run)
    figures = {}
    for members in groups.values():
        placed = [r for r in members if "placement" in r.result]  # placed, or trained too
        if not placed:
            continue
        schedulers = [r for r in members if "placement" not in r.result]
        rows = side_by_side([r.result for r in schedulers], [r.result for r in placed], baseline)
        figures.update({run.id: row for run, row in zip(schedulers + placed, rows, strict=True)})
    return figures
