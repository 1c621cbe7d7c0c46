"""A study on the session's real LocalCluster, with a real SQLite Optuna storage and MLflow store:
its trials run as Dask tasks, land in the storage and in MLflow, and a rerun resumes it."""

from __future__ import annotations

import copy
import operator

import optuna
import pytest
from mlflow import MlflowClient

from heraldbench.pipelines.tune import run_study, tune_study, validate
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.runner import simulate_run
from heraldbench.platform.schedulers import HeraldSpec, NaiveSpec
from heraldbench.platform.spec import parse_spec

CAP_MIB = 6.0
STUDY = {
    "name": "tune-test",
    "dataset": {"kind": "synthetic-criteo", "samples": 4000, "scale": 0.005, "seed": 2},
    "cluster": {"workers": 2, "batch_size": 32},
    "cache": {"ratio": 0.1},
    "embedding_dim": 16,
    "schedulers": [{"kind": "herald"}],
    "tuning": {
        "space": {
            "scheduler.lookahead": {"low": 1, "high": 8},
            "cache.ratio": {"low": 0.02, "high": 0.5, "log": True},
        },
        "objectives": ["traffic", "cache_memory"],
        "constraints": [{"metric": "cache_memory", "max": CAP_MIB}],
        "trials": 6,
        "sampler": {"kind": "random", "seed": 1},
    },
}


def children(mlflow: MlflowClient, target) -> list:
    return mlflow.search_runs(
        [target.experiment_id],
        max_results=500,
        filter_string=f"tags.mlflow.parentRunId = '{target.parent_run_id}'",
    )


@pytest.fixture(scope="module")
def storage(tmp_path_factory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('optuna') / 'optuna.db'}"


@pytest.fixture(scope="module")
def study(client, mlflow_uri, storage):
    return tune_study(
        copy.deepcopy(STUDY), client=client, storage=storage, uri=mlflow_uri, track=True
    )


def test_every_trial_runs_on_a_dask_worker_and_lands_in_the_storage(study, storage) -> None:
    assert sorted(o.number for o in study.added) == list(range(6))
    assert {o.state for o in study.added} == {"COMPLETE"}
    assert {o.worker for o in study.added} <= {"0", "1"}  # the LocalCluster's workers
    stored = optuna.load_study(study_name="tune-test", storage=storage)  # a fresh connection
    assert stored.metric_names == ["traffic", "cache_memory"]  # objectives named in Optuna
    assert [t.state.name for t in stored.trials] == ["COMPLETE"] * 6
    by_number = {o.number: o.values for o in study.added}
    assert all(t.values == by_number[t.number] for t in stored.trials)


def test_the_objectives_are_the_platform_s_own_figures(study) -> None:
    """Traffic is Herald's overall rows over naive's with the spec's own cache; memory is
    cache rows × dim × 4 bytes. Recomputed here in-process, away from the workers."""
    row = study.rows[0]
    base = parse_spec({k: v for k, v in STUDY.items() if k != "tuning"})
    trial = parse_spec({**base.model_dump(), "cache": {"ratio": row.params["cache.ratio"]}})
    trace = base.dataset.open()
    herald = simulate_run(
        trial, HeraldSpec(lookahead=row.params["scheduler.lookahead"]), trace=trace
    )
    naive = simulate_run(base, NaiveSpec(), trace=trace)
    rows = trial.cache.resolve_rows(trace.layout.total_rows, trial.embedding_dim)
    assert row.values[0] == pytest.approx(herald.counts.overall / naive.counts.overall, rel=1e-12)
    assert row.values[1] == pytest.approx(rows * 16 * 4 / 2**20)
    assert row.metrics["overall_rows"] == herald.counts.overall


def test_constraints_decide_feasibility_and_the_front_holds_only_feasible_trials(study) -> None:
    for row in study.rows:
        assert row.feasible == (row.values[1] <= CAP_MIB), row
    assert study.best and all(r.feasible for r in study.best)
    feasible = [r for r in study.rows if r.feasible]
    for row in feasible:  # every feasible trial off the front is dominated by one on it
        if row not in study.best:
            assert any(
                b.values[0] <= row.values[0] and b.values[1] <= row.values[1] for b in study.best
            )


def test_each_trial_is_a_nested_mlflow_run_under_the_study_s_parent(study, mlflow_uri) -> None:
    mlflow = MlflowClient(mlflow_uri)
    parent = mlflow.get_run(study.target.parent_run_id)
    assert parent.info.status == "FINISHED"
    assert parent.data.tags["heraldbench.kind"] == "study"
    assert parent.data.tags["pareto.size"] == str(len(study.best))
    assert parent.data.params["tuning.space.cache.ratio.high"] == "0.5"
    files = {a.path for a in mlflow.list_artifacts(parent.info.run_id)}
    assert {"trials.csv", "pareto.csv", "best.json", "spec.yaml", "plots"} <= files
    plots = {a.path for a in mlflow.list_artifacts(parent.info.run_id, "plots")}
    assert plots == {"plots/history.png", "plots/importances.png", "plots/pareto.png"}
    runs = {int(r.data.tags["optuna.trial_number"]): r for r in children(mlflow, study.target)}
    for row in study.rows:
        run = runs[row.number]
        assert run.info.status == "FINISHED" and row.run_id == run.info.run_id
        assert run.data.params["scheduler.lookahead"] == str(row.params["scheduler.lookahead"])
        assert run.data.params["cache.ratio"] == str(row.params["cache.ratio"])
        assert run.data.metrics["traffic"] == pytest.approx(row.values[0])
        assert run.data.metrics["cache_memory"] == pytest.approx(row.values[1])


def test_the_plots_and_tables_are_written(study) -> None:
    assert set(study.plots) == {"history", "importances", "pareto"}
    for path in study.plots.values():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    lines = study.files["trials"].read_text().splitlines()
    assert len(lines) == 1 + 6 and lines[0].startswith("trial,state,feasible,cache.ratio")
    assert len(study.files["pareto"].read_text().splitlines()) == 1 + len(study.best)


def test_running_the_study_again_adds_trials_to_it(study, client, mlflow_uri, storage) -> None:
    again = tune_study(
        copy.deepcopy(STUDY), client=client, storage=storage, uri=mlflow_uri, trials=3
    )
    assert again.trials_before == 6 and len(again.rows) == 9
    assert sorted(o.number for o in again.added) == [6, 7, 8]
    assert again.target.parent_run_id == study.target.parent_run_id  # one parent per study
    numbers = {
        int(r.data.tags["optuna.trial_number"])
        for r in children(MlflowClient(mlflow_uri), again.target)
    }
    assert numbers == set(range(9))
    drawn = [tuple(r.params.values()) for r in again.rows]
    assert len(set(drawn)) == 9  # the new tasks did not replay the first tasks' seeds


def test_a_study_is_not_resumed_with_another_problem(study, client, storage) -> None:
    changed = copy.deepcopy(STUDY)
    changed["tuning"]["space"]["cache.ratio"]["high"] = 0.9
    with pytest.raises(SpecError, match=r"tuning\.space\.cache\.ratio\.high: 0\.5 then, 0\.9 now"):
        tune_study(changed, client=client, storage=storage, track=False)
    renamed = tune_study(
        changed, client=client, storage=storage, study_name="tune-test-wider", trials=1, track=False
    )
    assert len(renamed.rows) == 1 and renamed.rows[0].state == "COMPLETE"
    with pytest.raises(SpecError, match="study name"):  # it names a folder as well
        tune_study(changed, client=client, storage=storage, study_name="../elsewhere")


def test_a_failing_trial_is_kept_with_its_error_and_the_others_go_on(
    client, storage, tmp_path
) -> None:
    broken = copy.deepcopy(STUDY)
    broken["dataset"] = {"kind": "criteo-tsv", "path": str(tmp_path / "missing.tsv")}
    broken["tuning"].update(objectives=["cache_memory"], constraints=[], trials=2)
    summary = run_study(
        broken, storage=storage, study_name="tune-broken", client=client, track=False
    )
    assert [t["state"] for t in summary["trials"]] == ["FAIL", "FAIL"]
    assert all("missing.tsv" in t["error"] for t in summary["trials"])
    assert summary["best"] == [] and "pareto" not in summary["plots"]


def test_a_trained_trial_reports_auc_at_every_evaluation(client, storage) -> None:
    trained = {
        **copy.deepcopy(STUDY),
        "mode": "train",
        "dataset": {"kind": "synthetic-criteo", "samples": 3000, "scale": 0.002, "seed": 3},
        "cluster": {"workers": 2, "batch_size": 64},  # 2,700 training samples: 21 iterations
        "embedding_dim": 8,
        "schedulers": [{"kind": "het"}],
        "train": {"model": "small", "eval_interval": 5, "device": "cpu"},
        "tuning": {
            "space": {"scheduler.bound": {"choices": [0, 64]}},
            "objectives": ["auc"],
            "constraints": [{"metric": "traffic", "max": 10}],
            "trials": 2,
            "pruning": {"kind": "median", "startup_trials": 5},
        },
    }
    assert validate(trained)["directions"] == ["maximize"]
    outcome = tune_study(
        trained, client=client, storage=storage, study_name="tune-train", track=False
    )
    assert [r.state for r in outcome.rows] == ["COMPLETE", "COMPLETE"]
    stored = optuna.load_study(study_name="tune-train", storage=storage)
    for trial, row in zip(stored.trials, outcome.rows, strict=True):
        assert sorted(trial.intermediate_values) == [5, 10, 15, 20]  # 21 iterations, every 5
        assert row.values == [row.metrics["auc"]] and 0.0 < row.values[0] < 1.0
        assert row.metrics["traffic"] > 0
    assert "history" in outcome.plots and "pareto" not in outcome.plots  # one objective


def test_a_trial_whose_task_never_returns_is_failed_by_its_key(client, storage) -> None:
    """A worker that dies mid-trial leaves the trial RUNNING; the driver fails it by the key
    the task stored on it, so the study never keeps a trial that will not end."""
    from heraldbench.pipelines.tune.study import _collect
    from heraldbench.pipelines.tune.trial import KEY_ATTR, TrialJob

    study = optuna.create_study(storage=storage, study_name="tune-lost")
    orphan, other = study.ask(), study.ask()
    orphan.set_user_attr(KEY_ATTR, "task-lost")
    other.set_user_attr(KEY_ATTR, "task-alive")
    lost = client.submit(operator.truediv, 1, 0, pure=False)  # a task that does not return
    job = TrialJob("task-lost", storage, "tune-lost", {}, 0, None, None)
    outcome = _collect(lost, job, study)
    assert outcome.state == "FAIL" and outcome.number == orphan.number
    assert "did not return" in outcome.error and "ZeroDivisionError" in outcome.error
    states = {t.number: t.state.name for t in study.get_trials()}
    assert states == {orphan.number: "FAIL", other.number: "RUNNING"}
