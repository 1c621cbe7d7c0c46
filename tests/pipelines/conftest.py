"""Shared, session-wide fixtures: one real LocalCluster and one real MLflow store.

Starting a cluster takes ~2 s and MLflow's first migration of a SQLite store ~4 s, so every test
of the session shares them; tests keep apart by experiment names and output folders.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``HERALDBENCH_HOME`` in a temporary folder, and MLflow's telemetry off, for the session
    (set before the cluster starts, so that its workers inherit them)."""
    folder = tmp_path_factory.mktemp("heraldbench-home")
    env = {"HERALDBENCH_HOME": str(folder), "MLFLOW_DISABLE_TELEMETRY": "true"}
    old = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    yield folder
    for name, value in old.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def mlflow_uri(home: Path) -> str:
    """A migrated SQLite MLflow store (``sqlite:///<tmp>/mlflow.db``)."""
    from mlflow import MlflowClient

    uri = f"sqlite:///{home / 'mlflow.db'}"
    MlflowClient(uri).search_experiments()  # runs the first-time migration once
    return uri


@pytest.fixture(scope="session")
def client(home: Path) -> Iterator[object]:
    """A Dask client on a LocalCluster of 2 worker processes with 1 thread each."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as dask,
    ):
        yield dask
