"""Studies through the service: a small study runs on the cluster to completion, its plots are
served, a bad tuning section is a 422 naming the field, and without the pipeline it is a 501."""

from __future__ import annotations

from typing import Any

import pytest

from heraldbench.api.routes import studies
from tests.api.helpers import TERMINAL, poll, tiny_spec


def study_spec(**tuning: Any) -> dict[str, Any]:
    return tiny_spec(
        name="api-study",
        tuning={
            "space": {
                "scheduler.lookahead": {"low": 1, "high": 4},
                "cache.ratio": {"low": 0.05, "high": 0.5, "log": True},
            },
            "objectives": ["traffic", "cache_memory"],
            "trials": 4,
            "sampler": {"kind": "random", "seed": 3},
            **tuning,
        },
    )


def wait_study(client: Any, study_id: int, timeout: float = 120.0) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        body = client.get(f"/api/studies/{study_id}").json()
        return body if body["status"] in TERMINAL else None

    return poll(finished, timeout=timeout, interval=0.2)


@pytest.fixture
def untracked(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """The study's trials run on this process's worker threads: keep them off MLflow (the
    service's HERALDBENCH_TRACK, read from the environment) and out of the working folder."""
    monkeypatch.setenv("HERALDBENCH_TRACK", "false")
    monkeypatch.setenv("HERALDBENCH_HOME", str(tmp_path / "home"))


def test_a_small_study_completes_on_the_cluster_with_its_plots(api_sqlite, untracked) -> None:
    # A cap that half the cache ratios break: those trials are flagged, never best.
    cap = {"metric": "cache_memory", "max": "4MiB"}
    response = api_sqlite.post("/api/studies", json=study_spec(constraints=[cap]))
    assert response.status_code == 202, response.text
    study = wait_study(api_sqlite, response.json()["id"])
    assert study["status"] == "succeeded", study["error"]
    assert study["name"] == "api-study" and study["directions"] == ["minimize", "minimize"]
    assert sorted(t["number"] for t in study["trials"]) == [0, 1, 2, 3]
    assert {t["state"] for t in study["trials"]} == {"COMPLETE"}
    assert all(1 <= t["params"]["scheduler.lookahead"] <= 4 for t in study["trials"])
    complete = {tuple(t["values"]) for t in study["trials"]}
    assert study["best"] and all(tuple(b["values"]) in complete for b in study["best"])
    assert study["objectives"] == ["traffic", "cache_memory"]
    assert study["constraints"] == ["cache_memory <= 4MiB"]
    flagged = {t["number"] for t in study["trials"] if not t["feasible"]}
    for trial in study["trials"]:
        breaks = trial["metrics"]["cache_memory"] > 4  # MiB
        assert (trial["number"] in flagged) == breaks, trial
    for name in ("history", "importances", "pareto"):
        plot = api_sqlite.get(study["plots"][name])
        assert plot.status_code == 200 and plot.content[:4] == b"\x89PNG", name
    listed = api_sqlite.get("/api/studies").json()
    assert listed["count"] == 1 and listed["data"][0]["id"] == study["id"]


def test_a_bad_tuning_section_is_422_naming_field_and_value(api_sqlite) -> None:
    bad = study_spec(space={"scheduler.lookahead": {"low": 1, "high": 5000}})
    response = api_sqlite.post("/api/studies", json=bad)
    assert response.status_code == 422
    (problem,) = response.json()["detail"]
    assert problem["field"] == "tuning.space.scheduler.lookahead.high"
    assert problem["value"] == 5000 and "1000" in problem["message"]
    missing = api_sqlite.post("/api/studies", json=tiny_spec())
    assert missing.status_code == 422 and missing.json()["detail"][0]["field"] == "tuning"
    assert api_sqlite.get("/api/studies").json()["count"] == 0  # nothing was stored


def placement_study(**tuning: Any) -> dict[str, Any]:
    return tiny_spec(
        name="api-placement-study",
        cluster={"workers": 4, "batch_size": 16, "hosts": 2, "devices_per_host": 2},
        placements=[{"kind": "flexshard"}],
        tuning={"space": {"placement.memory_headroom": {"low": 0.0, "high": 0.5}},
                "objectives": ["traffic", "device_memory"], "trials": 3,
                "sampler": {"kind": "random", "seed": 1}, **tuning},
    )  # fmt: skip


def test_a_placement_study_runs_through_the_service(api_sqlite, untracked) -> None:
    response = api_sqlite.post("/api/studies", json=placement_study())
    assert response.status_code == 202, response.text
    study = wait_study(api_sqlite, response.json()["id"])
    assert study["status"] == "succeeded", study["error"]
    assert study["objectives"] == ["traffic", "device_memory"]
    assert {t["state"] for t in study["trials"]} == {"COMPLETE"}
    assert all(0.0 <= t["params"]["placement.memory_headroom"] <= 0.5 for t in study["trials"])
    assert all(t["metrics"]["device_memory"] > 0 for t in study["trials"])


def test_a_placement_study_with_a_scheduler_metric_is_422(api_sqlite) -> None:
    response = api_sqlite.post("/api/studies", json=placement_study(objectives=["cache_memory"]))
    assert response.status_code == 422
    (problem,) = response.json()["detail"]
    assert problem["field"] == "tuning.objectives.0.metric"
    assert problem["value"] == "cache_memory" and "placement study" in problem["message"]
    assert api_sqlite.get("/api/studies").json()["count"] == 0


def test_without_the_tuning_pipeline_a_study_is_501(api_sqlite, monkeypatch) -> None:
    monkeypatch.setattr(studies, "tuning_pipeline", lambda: None)
    response = api_sqlite.post("/api/studies", json=study_spec())
    assert response.status_code == 501
    assert "heraldbench.pipelines.tune" in response.json()["detail"]


def test_studies_list_and_404(api_sqlite) -> None:
    assert api_sqlite.get("/api/studies").json() == {"data": [], "count": 0}
    assert api_sqlite.get("/api/studies/3").status_code == 404
    assert api_sqlite.get("/api/studies/3/plots/history").status_code == 404
