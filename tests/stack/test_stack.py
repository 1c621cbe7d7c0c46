"""The compose stack, run as processes (conftest.py): an experiment submitted over HTTP lands in
PostgreSQL and in the MLflow server, and a Dask worker killed during a run loses and duplicates
no run, in the app database or in MLflow.
"""

from __future__ import annotations

import time
import urllib.request
import uuid
from typing import Any

import psycopg
from benchmarks.bench_api_load import request
from psycopg.rows import dict_row
from sqlalchemy.engine import make_url
from tests.api.helpers import TERMINAL, poll, tiny_spec
from tests.stack.conftest import Stack
from tests.stack.processes import Started, kill

#: Four runs of several seconds each (two schedulers, two seeds), so that a worker can be killed
#: while one of them runs.
SLOW_DATASET = {"kind": "synthetic-criteo", "samples": 100_000, "scale": 0.01, "seed": 1}


def _submit(stack: Stack, spec: dict[str, Any]) -> int:
    status, body = request("POST", f"{stack.api_url}/api/experiments", spec)
    assert status == 202, body
    return body["id"]


def _wait(stack: Stack, experiment_id: int, timeout: float) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        body = request("GET", f"{stack.api_url}/api/experiments/{experiment_id}")[1]
        return body if body["status"] in TERMINAL else None

    try:
        return poll(finished, timeout=timeout, interval=0.5)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{stack.logs()}") from None


def _app_rows(stack: Stack, experiment_id: int) -> tuple[dict, list[dict]]:
    """The experiment's row and its runs' rows, read from the app database's tables."""
    with psycopg.connect(stack.conninfo("app"), row_factory=dict_row) as connection:
        experiment = connection.execute(
            "SELECT status, runs_total, runs_done, mlflow_experiment_id, mlflow_parent_run_id"
            " FROM experiments WHERE id = %s",
            (experiment_id,),
        ).fetchone()
        runs = connection.execute(
            "SELECT id, status, attempts, worker, mlflow_run_id, result FROM runs"
            " WHERE experiment_id = %s ORDER BY id",
            (experiment_id,),
        ).fetchall()
    return experiment, runs


def _mlflow(stack: Stack, method: str, path: str, body: Any = None) -> dict[str, Any]:
    status, answer = request(method, f"{stack.mlflow_url}/api/2.0/mlflow/{path}", body)
    assert status == 200, answer
    return answer


def _children(stack: Stack, experiment: dict) -> list[dict]:
    """The MLflow runs under the experiment's parent run, through the server's REST API."""
    search = {
        "experiment_ids": [experiment["mlflow_experiment_id"]],
        "filter": f"tags.mlflow.parentRunId = '{experiment['mlflow_parent_run_id']}'",
        "max_results": 1000,
    }
    return _mlflow(stack, "POST", "runs/search", search).get("runs", [])


def _tags(run: dict) -> dict[str, str]:
    return {tag["key"]: tag["value"] for tag in run["data"].get("tags", [])}


def _metrics(run: dict) -> dict[str, float]:
    return {metric["key"]: metric["value"] for metric in run["data"].get("metrics", [])}


def _fetch(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.read().decode(errors="replace")


def _assert_one_finished_mlflow_run_per_app_run(stack: Stack, experiment_id: int) -> list[dict]:
    experiment, runs = _app_rows(stack, experiment_id)
    children = _children(stack, experiment)
    keys = [_tags(child)["heraldbench.key"] for child in children]
    assert len(children) == len(runs) == experiment["runs_total"], (children, runs)
    assert len(set(keys)) == len(keys)  # one MLflow run per task
    assert {child["info"]["run_id"] for child in children} == {r["mlflow_run_id"] for r in runs}
    assert {child["info"]["status"] for child in children} == {"FINISHED"}
    # The last task ends the parent run just after it stores the experiment's final status.
    parent = f"runs/get?run_id={experiment['mlflow_parent_run_id']}"
    poll(lambda: _mlflow(stack, "GET", parent)["run"]["info"]["status"] == "FINISHED", timeout=60)
    return children


def test_an_experiment_lands_in_postgres_and_in_the_mlflow_server(stack: Stack) -> None:
    experiment_id = _submit(stack, tiny_spec(name=f"stack-{uuid.uuid4().hex[:8]}"))
    assert _wait(stack, experiment_id, timeout=180)["status"] == "succeeded"

    experiment, runs = _app_rows(stack, experiment_id)
    assert experiment["status"] == "succeeded" and experiment["runs_done"] == 2
    workers = {f"tcp://127.0.0.1:{port}" for w in stack.workers() for port in w.listening_ports()}
    for run in runs:
        assert run["status"] == "succeeded" and run["attempts"] == 1
        assert run["result"]["counts"] and run["worker"] in workers

    children = _assert_one_finished_mlflow_run_per_app_run(stack, experiment_id)
    by_id = {run["mlflow_run_id"]: run for run in runs}
    for child in children:  # the figures in MLflow are the ones in PostgreSQL
        totals = by_id[child["info"]["run_id"]]["result"]["totals"]
        metrics = _metrics(child)
        assert {k: metrics[f"totals/{k}"] for k in totals} == totals
        _assert_artifacts_went_through_the_server(stack, child)


def _assert_artifacts_went_through_the_server(stack: Stack, child: dict) -> None:
    """Proxied artifacts: the worker uploaded to the server, which wrote to its volume."""
    info = child["info"]
    assert info["artifact_uri"].startswith("mlflow-artifacts:/")
    listed = _mlflow(stack, "GET", f"artifacts/list?run_id={info['run_id']}")
    assert {"result.json", "iterations.csv", "spec.yaml"} <= {f["path"] for f in listed["files"]}
    stored = stack.artifacts / info["experiment_id"] / info["run_id"] / "artifacts"
    assert (stored / "result.json").is_file()


def _tables(conninfo: str) -> dict[str, set[str]]:
    """Table -> column names, in the public schema of a database."""
    with psycopg.connect(conninfo) as connection:
        rows = connection.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public'"
        ).fetchall()
    tables: dict[str, set[str]] = {}
    for table, column in rows:
        tables.setdefault(table, set()).add(column)
    return tables


def test_the_app_mlflow_and_optuna_keep_to_their_own_databases(stack: Stack) -> None:
    """Both the app and MLflow have tables called experiments and runs; MLflow and Optuna both
    keep an alembic_version table."""
    app, mlflow = _tables(stack.conninfo("app")), _tables(stack.conninfo("mlflow"))
    assert "dask_key" in app["runs"] and "alembic_version" not in app
    assert "run_uuid" in mlflow["runs"] and "alembic_version" in mlflow
    storage = make_url(stack.processes["api-1"].spec.env["HERALDBENCH_OPTUNA_STORAGE"])
    assert storage.database == stack.databases["optuna"]
    assert "run_uuid" not in _tables(stack.conninfo("optuna")).get("runs", set())


def test_the_web_ui_and_the_links_it_shows_answer(stack: Stack) -> None:
    status, page = _fetch(f"{stack.api_url}/")
    assert status == 200 and "<title>heraldbench</title>" in page
    status, config = request("GET", f"{stack.api_url}/api/config")
    assert status == 200, config
    assert _fetch(config["mlflow_ui_url"])[0] == 200  # the MLflow UI (Host check passed)
    status, dashboard = _fetch(config["dask_dashboard_url"])
    assert status == 200 and "Dask" in dashboard


def test_a_distributed_training_spans_the_two_dask_workers(stack: Stack) -> None:
    """mode: train with backend distributed: one rank per `dask worker` process of the stack (before
    the test below kills one of them)."""
    spec = tiny_spec(name=f"stack-dist-{uuid.uuid4().hex[:8]}", mode="train",
                     schedulers=[{"kind": "naive"}],
                     cluster={"workers": 2, "batch_size": 32},
                     train={"model": "small", "backend": "distributed", "device": "cpu"})  # fmt: skip
    experiment_id = _submit(stack, spec)
    assert _wait(stack, experiment_id, timeout=300)["status"] == "succeeded", stack.logs()
    _, runs = _app_rows(stack, experiment_id)
    trained = [r for r in runs if r["result"] and r["result"].get("measured")]
    assert trained, runs
    measured = trained[0]["result"]["measured"]
    assert measured["ranks"] == 2 and measured["bytes"]["network"] > 0
    children = _assert_one_finished_mlflow_run_per_app_run(stack, experiment_id)
    (child,) = [c for c in children if c["info"]["run_id"] == trained[0]["mlflow_run_id"]]
    metrics = _metrics(child)
    assert metrics["measured/samples_per_second"] == measured["samples_per_second"]
    assert "iteration/measured_compute_s" in metrics  # stepped: one value per iteration


def _worker_at(stack: Stack, address: str) -> Started:
    port = int(address.rsplit(":", 1)[1])
    (worker,) = [w for w in stack.workers() if port in w.listening_ports()]
    return worker


def _running_child(stack: Stack, experiment_id: int) -> dict | None:
    """An MLflow run of the experiment that a worker has started and not finished."""
    experiment, _ = _app_rows(stack, experiment_id)
    if experiment["mlflow_parent_run_id"] is None:
        return None
    running = [c for c in _children(stack, experiment) if c["info"]["status"] == "RUNNING"]
    return running[0] if running else None


def test_a_worker_killed_mid_run_loses_and_duplicates_no_run(stack: Stack) -> None:
    assert len(stack.workers()) == 2
    spec = tiny_spec(name=f"stack-kill-{uuid.uuid4().hex[:8]}", dataset=SLOW_DATASET, seeds=[0, 1])
    started = time.monotonic()
    experiment_id = _submit(stack, spec)
    victim = poll(lambda: _running_child(stack, experiment_id), timeout=120, interval=0.2)
    address = _tags(victim)["heraldbench.worker"]
    kill(_worker_at(stack, address))  # the whole container at once: nanny and worker
    assert len(stack.workers()) == 1

    body = _wait(stack, experiment_id, timeout=300)
    assert body["status"] == "succeeded", body.get("error")
    experiment, runs = _app_rows(stack, experiment_id)
    assert experiment["runs_done"] == experiment["runs_total"] == len(runs) == 4
    assert {run["status"] for run in runs} == {"succeeded"}
    _assert_one_finished_mlflow_run_per_app_run(stack, experiment_id)
    (retried,) = [r for r in runs if r["mlflow_run_id"] == victim["info"]["run_id"]]
    assert retried["attempts"] == 2 and retried["worker"] != address  # Dask ran it again
    print(
        f"killed {address} during {_tags(victim)['heraldbench.scheduler']} "
        f"seed {_tags(victim)['heraldbench.seed']}; attempts per run "
        f"{[r['attempts'] for r in runs]}; finished in {time.monotonic() - started:.1f} s"
    )

