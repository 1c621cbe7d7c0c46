"""MLflow: where runs are tracked, and how a submission and its runs are logged.

``MLFLOW_TRACKING_URI`` selects a tracking server (``http://mlflow:5000``); without it the
embedded default is a SQLite store in the project data folder, ``$HERALDBENCH_HOME`` (default
``./.heraldbench``): ``mlflow.db`` with artifacts under ``mlartifacts/``. (MLflow 3 refuses the
old ``./mlruns`` file store, and SQLite suits one machine.)

One MLflow experiment per spec name, created once by the driver before any task runs (first-time
migrations and concurrent creation race on SQLite); one parent run per submission; one nested run
per task, started on the Dask worker with ``parent_run_id`` (``nested=True`` only works within one
process). Metrics go in batches (``MlflowClient.log_batch``, 1,000 per call): each log call is
one request to a server.
"""

from __future__ import annotations

import functools
import os
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from heraldbench.platform.exceptions import UnavailableError
from heraldbench.platform.home import HOME_ENV, home

__all__ = [
    "EXPERIMENT_KIND_TAG",
    "HOME_ENV",
    "SERIES_CAP",
    "Target",
    "flatten",
    "experiment_tags",
    "guarded",
    "home",
    "log_metrics",
    "open_experiment",
    "run_url",
    "series_metrics",
    "tracking_uri",
    "ui_base",
    "ui_hint",
]

URI_ENV = "MLFLOW_TRACKING_URI"
#: Stepped metrics logged per series at most; longer series are averaged over equal windows.
SERIES_CAP = 1000
_BATCH = 1000  # MLflow's limit of metrics per log_batch call
_UI = "http://127.0.0.1:5000"
#: The experiment tag MLflow's UI reads to pick its model-training or GenAI view.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"


def tracking_uri() -> str:
    """``$MLFLOW_TRACKING_URI``, else the embedded SQLite store under :func:`home`."""
    return os.environ.get(URI_ENV) or f"sqlite:///{home() / 'mlflow.db'}"


def _is_local(uri: str) -> bool:
    return uri.startswith(("sqlite:", "file:", "/"))


def ui_hint(uri: str) -> str:
    """How a user opens the MLflow UI on ``uri``."""
    if uri.startswith("http"):
        return f"open {uri}"
    return (
        f"`heraldbench serve` (serves MLflow's UI on {_UI} with the service), or "
        f"`mlflow ui --backend-store-uri {uri}`"
    )


def ui_base(uri: str, run_id: str) -> str | None:
    """The MLflow UI that shows run ``run_id`` of ``uri``, or None when none does now.

    A tracking server is its own UI. For a local store: ``HERALDBENCH_MLFLOW_UI_URL``, else where
    ``heraldbench serve`` serves MLflow (``HERALDBENCH_MLFLOW_UI_PORT``, default 5000), if it
    answers for that run there (so a UI on another store is never linked). No UI: no link, since
    a printed link must open.
    """
    if uri.startswith("http"):
        return uri.rstrip("/")
    port = os.environ.get("HERALDBENCH_MLFLOW_UI_PORT") or "5000"
    base = (os.environ.get("HERALDBENCH_MLFLOW_UI_URL") or f"http://127.0.0.1:{port}").rstrip("/")
    if not base.startswith(("http://", "https://")):
        return None
    probe = f"{base}/ajax-api/2.0/mlflow/runs/get?run_id={run_id}"
    try:
        with urllib.request.urlopen(probe, timeout=10) as response:  # noqa: S310 - http(s) only
            return base if response.status == 200 else None
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Target:
    """Where a task logs: the store, the experiment and the submission's parent run."""

    uri: str
    experiment_id: str
    parent_run_id: str

    @functools.cached_property
    def ui(self) -> str | None:
        """The MLflow UI showing this target (:func:`ui_base`), looked up once."""
        return ui_base(self.uri, self.parent_run_id)

    def url(self, run_id: str | None = None) -> str | None:
        """The UI address of a run (default: the parent run), None without a UI."""
        if self.ui is None:
            return None
        return run_url(self.ui, self.experiment_id, run_id or self.parent_run_id)


def run_url(base: str, experiment_id: str, run_id: str) -> str:
    """The address of a run on the MLflow UI at ``base``."""
    return f"{base.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"


@functools.lru_cache(maxsize=1)
def experiment_tags() -> dict[str, str]:
    """Tags of every experiment heraldbench creates: MLflow's model-training view (not its GenAI
    view, MLflow 3's default for experiments without the tag), the version and the git commit."""
    try:
        version = metadata.version("heraldbench")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    return {EXPERIMENT_KIND_TAG: "custom_model_development", "heraldbench.version": version,
            "heraldbench.git_commit": _git_commit()}  # fmt: skip


def _git_commit() -> str:
    """The commit of the checkout this package runs from ("unknown" outside a git checkout)."""
    try:
        found = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
            capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return found.stdout.strip() or "unknown"


def open_experiment(client: Any, name: str, uri: str) -> str:
    """The id of experiment ``name``, created if missing (local artifacts under :func:`home`),
    with :func:`experiment_tags` (set again on an experiment that lacks them)."""
    from mlflow.exceptions import MlflowException

    try:
        found = client.get_experiment_by_name(name)
        if found is not None:
            for key, value in experiment_tags().items():
                if found.tags.get(key) != value:
                    client.set_experiment_tag(found.experiment_id, key, value)
            return found.experiment_id
        location = (home() / "mlartifacts" / name).as_uri() if _is_local(uri) else None
        return client.create_experiment(name, artifact_location=location, tags=experiment_tags())
    except MlflowException as exc:
        if "already exists" in str(exc):  # another driver created it just now
            return client.get_experiment_by_name(name).experiment_id
        raise UnavailableError(f"MLflow at {uri} refused the experiment {name!r}: {exc}") from None
    except OSError as exc:
        raise UnavailableError(f"cannot reach MLflow at {uri}: {exc}") from None


def flatten(document: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested fields as dotted MLflow params: ``{"cache.ratio": "0.1", ...}``; None is left out."""
    flat: dict[str, str] = {}
    for key, value in document.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        elif value is not None:  # an unset option is no param (never the text 'None')
            flat[name] = str(value)[:6000]  # MLflow's param value limit
    return flat


def scalar_metrics(values: Mapping[str, Any], prefix: str) -> dict[str, float]:
    """The finite numbers of a flat mapping, as ``prefix/name`` metrics."""
    out = {}
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            continue
        if np.isfinite(value):
            out[f"{prefix}/{key}"] = float(value)
    return out


def series_metrics(
    series: Mapping[str, np.ndarray], cap: int = SERIES_CAP, prefix: str = "iteration"
) -> tuple[list[Any], int]:
    """Stepped metrics of per-iteration series, and the stride used.

    Every iteration is logged while a series has at most ``cap`` of them; beyond that, the mean of
    each window of ``stride = ceil(n / cap)`` iterations is logged at the window's first
    iteration (the full series is in the run's CSV artifact). A series that is zero throughout
    is not logged.
    """
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    metrics, stride = [], 1
    for name, values in series.items():
        values = np.asarray(values, np.float64)
        if not values.any():
            continue  # always zero (no all-reduce, no metadata): a flat line says nothing
        stride = max(1, -(-len(values) // cap))
        steps = np.arange(0, len(values), stride)
        means = np.add.reduceat(values, steps) / np.diff(np.append(steps, len(values)))
        metrics += [
            Metric(f"{prefix}/{name}", float(v), now, int(s))
            for s, v in zip(steps, means, strict=True)
        ]
    return metrics, stride


def log_metrics(client: Any, run_id: str, metrics: Iterable[Any] | Mapping[str, float]) -> None:
    """Log metrics in batches of 1,000 (a mapping is logged at step 0)."""
    from mlflow.entities import Metric

    if isinstance(metrics, Mapping):
        now = int(time.time() * 1000)
        metrics = [Metric(k, float(v), now, 0) for k, v in metrics.items()]
    metrics = list(metrics)
    for start in range(0, len(metrics), _BATCH):
        client.log_batch(run_id, metrics=metrics[start : start + _BATCH])


def log_params(client: Any, run_id: str, params: Mapping[str, str]) -> None:
    """Log params in batches (MLflow takes at most 100 per call)."""
    from mlflow.entities import Param

    items = [Param(k[:250], v) for k, v in params.items()]
    for start in range(0, len(items), 100):
        client.log_batch(run_id, params=items[start : start + 100])


def guarded(owner: Any, step: Callable[..., None], *args: Any) -> None:
    """Run one MLflow logging step; its failure is kept as ``owner.tracking_error`` (the first
    one wins: later steps usually fail because of it), never raised, since the outcome of the
    run or trial being logged matters more than its logging."""
    try:
        step(*args)
    except Exception as exc:  # noqa: BLE001 - kept on the owner
        owner.tracking_error = owner.tracking_error or f"{type(exc).__name__}: {exc}"
