"""MLflow: each run links to its MLflow run, and the experiment to its parent run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.helpers import poll, submit, tiny_spec, wait_finished


@pytest.fixture
def tracked(serve, sqlite_url, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HERALDBENCH_HOME", str(home))  # the pipelines put artifacts there
    uri = f"sqlite:///{home / 'mlflow.db'}"
    with serve(sqlite_url, track=True, mlflow_tracking_uri=uri, home=home) as api:
        yield api, uri


def ready_ui(api) -> str:
    """The MLflow UI's link, once the service says it answers (never before: test_config)."""
    return poll(lambda: api.get("/api/config").json()["mlflow_ui_url"], timeout=120)


def _opens(url: str) -> bool:
    """Whether ``url`` answers 200, as a browser would open it."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def test_runs_are_tracked_in_mlflow(tracked) -> None:
    from mlflow import MlflowClient

    api, uri = tracked
    experiment_id = submit(api, tiny_spec(name="tracked"))
    ui = ready_ui(api)
    assert _opens(ui)  # shown only once it answers
    experiment = wait_finished(api, experiment_id, timeout=120)
    assert experiment["status"] == "succeeded", experiment
    assert experiment["tracking_error"] is None
    assert ui.startswith("http://127.0.0.1:") and experiment["mlflow_url"].startswith(ui)
    client = MlflowClient(uri)
    parent_id = experiment["mlflow_url"].rsplit("/", 1)[-1]
    # The last run's task ends the parent run just after it stores its own result.
    poll(lambda: client.get_run(parent_id).info.status == "FINISHED", timeout=30)
    for run in experiment["runs"]:
        assert run["tracking_error"] is None and run["mlflow_run_url"]
        mlflow_run = client.get_run(run["mlflow_run_url"].rsplit("/", 1)[-1])
        assert mlflow_run.data.tags["mlflow.parentRunId"] == parent_id
        assert mlflow_run.data.metrics["relative/overall"] == pytest.approx(
            run["relative"]["overall"]
        )
    # Every link opens, on the MLflow UI the service started, on the store the runs are in.
    poll(lambda: _opens(ui), timeout=120, interval=0.5)
    for url in [experiment["mlflow_url"]] + [r["mlflow_run_url"] for r in experiment["runs"]]:
        assert _opens(url), url
        run_id = url.rsplit("/", 1)[-1]
        assert _opens(f"{ui}/ajax-api/2.0/mlflow/runs/get?run_id={run_id}"), run_id


def test_no_link_is_given_where_no_mlflow_ui_serves_the_store(serve, sqlite_url, tmp_path) -> None:
    home = tmp_path / "home"
    uri = f"sqlite:///{home / 'mlflow.db'}"
    with serve(sqlite_url, track=True, mlflow_tracking_uri=uri, home=home, serve_mlflow=False) as api:
        assert api.get("/api/config").json()["mlflow_ui_url"] is None


def test_a_study_and_each_trial_link_to_their_mlflow_runs(tracked) -> None:
    from mlflow import MlflowClient

    from tests.api.test_studies import study_spec, wait_study

    api, uri = tracked
    response = api.post("/api/studies", json=study_spec(trials=2))
    assert response.status_code == 202, response.text
    ui = ready_ui(api)
    study = wait_study(api, response.json()["id"], timeout=180)
    assert study["status"] == "succeeded", study["error"]
    assert study["mlflow_url"] and study["mlflow_url"].startswith(ui), study["mlflow_url"]
    parent_id = study["mlflow_url"].rsplit("/", 1)[-1]
    client = MlflowClient(uri)
    assert len(study["trials"]) == 2
    for trial in study["trials"]:
        run_id = trial["mlflow_run_id"]
        assert run_id and trial["mlflow_run_url"] == study["mlflow_url"].replace(parent_id, run_id)
        run = client.get_run(run_id)
        assert run.data.tags["mlflow.parentRunId"] == parent_id
        assert run.info.experiment_id == client.get_run(parent_id).info.experiment_id
    assert api.get("/api/studies").json()["data"][0]["trials"][0]["mlflow_run_url"]
    poll(lambda: _opens(ui), timeout=120, interval=0.5)
    for url in [study["mlflow_url"]] + [t["mlflow_run_url"] for t in study["trials"]]:
        assert _opens(url), url
