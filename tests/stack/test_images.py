"""The compose stack in a container engine (marker ``stack``; opt in with --runstack): the images
build, every health check passes, an experiment and a study submitted over HTTP land in PostgreSQL
and in MLflow (artifacts fetched through the server's proxy), a worker container killed mid-run
loses and duplicates no run, the workers scale to three, `down` then `up` keeps the data, and
`down -v` leaves nothing. The tests run in this file's order on one project (engine.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from benchmarks.bench_api_load import request
from tests.api.helpers import TERMINAL, poll, tiny_spec
from tests.api.test_studies import study_spec
from tests.stack.engine import Project, Unavailable, base_images, compose_command, engine_answers
from tests.stack.test_stack import SLOW_DATASET

pytestmark = pytest.mark.stack

#: postgres, mlflow, the scheduler, two CPU workers (deploy.replicas) and the API.
CONTAINERS = 6
#: Seconds the stack stays idle before its memory is read.
SETTLE_S = 30
#: What the run measured, written as JSON to the file HERALDBENCH_STACK_FIGURES names
#: (benchmarks/bench_stack.py reads it into its record).
FIGURES: dict[str, Any] = {}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    try:
        engine_answers()
        stack = Project(compose_command(), tmp_path_factory.mktemp("compose"))
        stack.write_env(base_images())
    except Unavailable as reason:
        pytest.skip(str(reason))
    try:
        yield stack
    finally:
        stack("down", "-v", "--remove-orphans")
        version = subprocess.run(
            [*stack.compose, "version"], capture_output=True, text=True, check=False
        )
        FIGURES["compose"] = version.stdout.splitlines()[0] if version.stdout else stack.compose
        if os.environ.get("HERALDBENCH_STACK_FIGURES"):
            with open(os.environ["HERALDBENCH_STACK_FIGURES"], "w") as out:
                json.dump(FIGURES, out, indent=1)


def _timed(name: str, started: float) -> None:
    FIGURES[name] = round(time.monotonic() - started, 1)


def _api(project: Project, method: str, path: str, body: Any = None) -> Any:
    status, answer = request(method, f"{project.url('API_PORT')}{path}", body)
    assert status in (200, 202), answer
    return answer


def _mlflow(project: Project, method: str, path: str, body: Any = None) -> Any:
    status, answer = request(method, f"{project.url('MLFLOW_PORT')}/api/2.0/mlflow/{path}", body)
    assert status == 200, answer
    return answer


def _wait(project: Project, kind: str, ident: int, timeout: float) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        body = _api(project, "GET", f"/api/{kind}/{ident}")
        return body if body["status"] in TERMINAL else None

    try:
        return poll(finished, timeout=timeout, interval=1.0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{project.logs()}") from None


def _children(project: Project, experiment_id: str, parent_run_id: str) -> list[dict]:
    search = {"experiment_ids": [experiment_id], "max_results": 1000,
              "filter": f"tags.mlflow.parentRunId = '{parent_run_id}'"}  # fmt: skip
    return _mlflow(project, "POST", "runs/search", search).get("runs", [])


def _tags(run: dict) -> dict[str, str]:
    return {tag["key"]: tag["value"] for tag in run["data"].get("tags", [])}


def _app_runs(project: Project, experiment_id: int) -> tuple[dict, list[dict]]:
    (experiment,) = project.sql(
        "POSTGRES_DB", f"SELECT * FROM experiments WHERE id = {experiment_id}"
    )
    runs = project.sql(
        "POSTGRES_DB", f"SELECT * FROM runs WHERE experiment_id = {experiment_id} ORDER BY id"
    )
    return experiment, runs  # fmt: skip


def _one_finished_mlflow_run_per_app_run(project: Project, experiment_id: int) -> list[dict]:
    experiment, runs = _app_runs(project, experiment_id)
    children = _children(
        project, experiment["mlflow_experiment_id"], experiment["mlflow_parent_run_id"]
    )
    keys = [_tags(child)["heraldbench.key"] for child in children]  # fmt: skip
    assert len(children) == len(runs) == experiment["runs_total"] == len(set(keys)), children
    assert {c["info"]["run_id"] for c in children} == {r["mlflow_run_id"] for r in runs}
    assert {c["info"]["status"] for c in children} == {"FINISHED"}
    return children


def _proxied_artifact(project: Project, run: dict, name: str) -> bytes:
    """An artifact through the tracking server's proxy (mlflow-artifacts:/ URIs)."""
    info = run["info"]
    assert info["artifact_uri"].startswith("mlflow-artifacts:/"), info["artifact_uri"]
    path = f"{info['experiment_id']}/{info['run_id']}/artifacts/{name}"
    url = f"{project.url('MLFLOW_PORT')}/api/2.0/mlflow-artifacts/artifacts/{path}"
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read()


def test_the_images_build_and_every_health_check_passes(project: Project) -> None:
    started = time.monotonic()
    project("build", timeout=3600)
    _timed("build_s", started)
    started = time.monotonic()
    project("up", "-d", timeout=900)
    project.wait_healthy(CONTAINERS)
    _timed("up_to_healthy_s", started)
    time.sleep(SETTLE_S)
    FIGURES["idle_memory_mib"] = project.memory_mib()
    users = {s: project.exec(s, "id", "-un").strip() for s in ("mlflow", "api", "dask-worker")}
    assert users == {"mlflow": "mlflow", "api": "heraldbench", "dask-worker": "heraldbench"}


def test_an_experiment_lands_in_postgres_and_in_mlflow_with_its_artifacts(project: Project) -> None:
    experiment_id = _api(project, "POST", "/api/experiments", tiny_spec(name="stack-images"))["id"]
    assert _wait(project, "experiments", experiment_id, timeout=300)["status"] == "succeeded"
    experiment, runs = _app_runs(project, experiment_id)
    assert experiment["status"] == "succeeded" and experiment["runs_done"] == len(runs) == 2
    by_id = {run["mlflow_run_id"]: run for run in runs}
    for child in _one_finished_mlflow_run_per_app_run(project, experiment_id):
        stored = json.loads(_proxied_artifact(project, child, "result.json"))
        assert stored["totals"] == by_id[child["info"]["run_id"]]["result"]["totals"]
        volume = f"/mlartifacts/{child['info']['experiment_id']}/{child['info']['run_id']}"
        assert "result.json" in project.exec("mlflow", "ls", f"{volume}/artifacts")


def test_a_study_lands_in_postgres_optuna_and_mlflow(project: Project) -> None:
    study_id = _api(project, "POST", "/api/studies", study_spec(trials=2))["id"]
    study = _wait(project, "studies", study_id, timeout=300)
    assert study["status"] == "succeeded", study.get("error")
    (row,) = project.sql(
        "POSTGRES_DB", f"SELECT status, storage_name FROM studies WHERE id = {study_id}"
    )
    trials = project.sql(
        "OPTUNA_DB",
        "SELECT t.number, t.state FROM trials t JOIN studies s USING (study_id)"
        f" WHERE s.study_name = '{row['storage_name']}'",
    )
    assert row["status"] == "succeeded"
    assert sorted((t["number"], t["state"]) for t in trials) == [(0, "COMPLETE"), (1, "COMPLETE")]
    for trial in study["trials"]:
        run = _mlflow(project, "GET", f"runs/get?run_id={trial['mlflow_run_id']}")["run"]
        assert run["info"]["status"] == "FINISHED"


def _worker_container(project: Project, address: str) -> dict:
    host = address.removeprefix("tcp://").rsplit(":", 1)[0]
    (container,) = [
        c
        for c in project.containers("dask-worker")
        if host in {n["IPAddress"] for n in c["NetworkSettings"]["Networks"].values()}
    ]
    return container  # fmt: skip


def _running_child(project: Project, experiment_id: int) -> dict | None:
    experiment, _ = _app_runs(project, experiment_id)
    if experiment["mlflow_parent_run_id"] is None:
        return None
    children = _children(
        project, experiment["mlflow_experiment_id"], experiment["mlflow_parent_run_id"]
    )
    return next((c for c in children if c["info"]["status"] == "RUNNING"), None)  # fmt: skip


def test_a_worker_container_killed_mid_run_loses_and_duplicates_no_run(project: Project) -> None:
    spec = tiny_spec(name=f"stack-kill-{uuid.uuid4().hex[:8]}", dataset=SLOW_DATASET, seeds=[0, 1])
    experiment_id = _api(project, "POST", "/api/experiments", spec)["id"]
    victim = poll(lambda: _running_child(project, experiment_id), timeout=300, interval=0.5)
    address = _tags(victim)["heraldbench.worker"]
    assert project.kill(_worker_container(project, address)["Id"])
    assert len(project.containers("dask-worker")) == 1

    body = _wait(project, "experiments", experiment_id, timeout=600)
    assert body["status"] == "succeeded", body.get("error")
    experiment, runs = _app_runs(project, experiment_id)
    assert experiment["runs_done"] == experiment["runs_total"] == len(runs) == 4
    assert {run["status"] for run in runs} == {"succeeded"}
    _one_finished_mlflow_run_per_app_run(project, experiment_id)
    (retried,) = [r for r in runs if r["mlflow_run_id"] == victim["info"]["run_id"]]
    assert retried["attempts"] == 2 and retried["worker"] != address  # Dask ran it again


def _scheduler_workers(project: Project) -> int:
    code = ("from distributed import Client; c = Client('tcp://127.0.0.1:8786', timeout=30);"
            " print(len(c.scheduler_info()['workers']))")  # fmt: skip
    return int(project.exec("dask-scheduler", "python", "-c", code))


def test_the_workers_scale_to_three(project: Project) -> None:
    project("up", "-d", "--scale", "dask-worker=3", "--no-recreate", timeout=600)
    project.wait_healthy(CONTAINERS + 1)
    assert len(project.containers("dask-worker")) == 3
    poll(lambda: _scheduler_workers(project) == 3, timeout=120, interval=2)


def test_down_and_up_keeps_the_data(project: Project) -> None:
    before = project.sql("POSTGRES_DB", "SELECT id, status FROM experiments ORDER BY id")
    project("down", timeout=300)
    assert project.leftovers()["containers"] == [] and project.leftovers()["volumes"]
    started = time.monotonic()
    project("up", "-d", timeout=900)
    project.wait_healthy(CONTAINERS)
    _timed("up_again_to_healthy_s", started)
    assert project.sql("POSTGRES_DB", "SELECT id, status FROM experiments ORDER BY id") == before
    listed = _api(project, "GET", "/api/experiments")
    assert {e["id"] for e in listed["data"]} == {row["id"] for row in before}

    (child, *_) = _one_finished_mlflow_run_per_app_run(project, before[0]["id"])
    assert json.loads(_proxied_artifact(project, child, "result.json"))["totals"]


def test_down_with_volumes_leaves_nothing(project: Project) -> None:
    project("down", "-v", "--remove-orphans", timeout=300)
    assert project.leftovers() == {"containers": [], "volumes": [], "networks": []}
