"""Cancelling a running run stops its computation (checked between iterations)."""

from __future__ import annotations

import time
from typing import Any

from tests.api.conftest import _idle
from tests.api.helpers import poll, submit, tiny_spec

#: The issue's bound is 2 s; a shared CI machine gets a generous margin on top.
STOP_WITHIN_S = 15.0


def _running(api: Any, experiment_id: int) -> bool:
    runs = api.get(f"/api/experiments/{experiment_id}").json()["runs"]
    return any(r["status"] == "running" and (r["progress"] or 0) > 0 for r in runs)


def test_cancel_stops_a_running_simulation_and_frees_its_worker(api_sqlite, dask_cluster) -> None:
    # ~50 M samples x 26 ids: minutes of simulation if nothing stops it.
    spec = tiny_spec(
        dataset={"kind": "synthetic-criteo", "samples": 50_000_000, "scale": 0.001, "seed": 1},
        schedulers=[{"kind": "naive"}],
    )
    experiment_id = submit(api_sqlite, spec)
    poll(lambda: _running(api_sqlite, experiment_id), timeout=60)
    response = api_sqlite.post(f"/api/experiments/{experiment_id}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    cancelled = time.monotonic()
    poll(lambda: _idle(dask_cluster), timeout=120, interval=0.05)
    assert time.monotonic() - cancelled < STOP_WITHIN_S
    run = api_sqlite.get(f"/api/experiments/{experiment_id}").json()["runs"][0]
    assert run["status"] == "cancelled" and run["counts"] is None


def test_cancel_stops_a_running_studys_trials_and_frees_the_workers(
    api_sqlite, dask_cluster, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("HERALDBENCH_TRACK", "false")
    monkeypatch.setenv("HERALDBENCH_HOME", str(tmp_path / "home"))
    spec = tiny_spec(
        name="long-study",
        dataset={"kind": "synthetic-criteo", "samples": 50_000_000, "scale": 0.001, "seed": 1},
        tuning={"space": {"scheduler.lookahead": {"low": 1, "high": 4}},
                "objectives": ["time", "cache_memory"], "trials": 6,
                "sampler": {"kind": "random", "seed": 3}},  # fmt: skip
    )
    response = api_sqlite.post("/api/studies", json=spec)
    assert response.status_code == 202, response.text
    study_id = response.json()["id"]
    poll(lambda: _trials_running(dask_cluster), timeout=60)
    time.sleep(1.0)  # into the trials' iterations
    response = api_sqlite.post(f"/api/studies/{study_id}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    cancelled = time.monotonic()
    poll(lambda: _idle(dask_cluster), timeout=120, interval=0.05)
    assert time.monotonic() - cancelled < STOP_WITHIN_S
    study = api_sqlite.get(f"/api/studies/{study_id}").json()
    assert study["status"] == "cancelled"
    assert api_sqlite.post("/api/studies/424242/cancel").status_code == 404


def _running_trials(dask_worker: Any) -> int:
    return sum("trial" in str(key) for key in dask_worker.state.executing)


def _trials_running(dask_cluster: Any) -> bool:
    return any(dask_cluster.run(_running_trials).values())
