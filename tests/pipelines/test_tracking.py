"""MLflow helpers: where the store is, flattened params, stepped series with a cap."""

from __future__ import annotations

import numpy as np
import pytest

from heraldbench.pipelines.tracking import flatten, run_url, series_metrics, tracking_uri, ui_hint


def test_the_default_store_is_sqlite_under_heraldbench_home(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("HERALDBENCH_HOME", str(tmp_path / "home"))
    uri = tracking_uri()
    assert uri == f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}"
    assert "heraldbench serve" in ui_hint(uri) and f"--backend-store-uri {uri}" in ui_hint(uri)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://mlflow:5000")
    assert tracking_uri() == "http://mlflow:5000"
    assert (
        run_url("http://mlflow:5000/", "3", "abc") == "http://mlflow:5000/#/experiments/3/runs/abc"
    )


def test_params_are_the_flattened_spec() -> None:
    spec = {"cache": {"ratio": 0.1, "rows": None}, "cluster": {"workers": 8}, "name": "x"}
    assert flatten(spec) == {"cache.ratio": "0.1", "cluster.workers": "8", "name": "x"}


def test_no_ui_is_linked_where_none_answers(tmp_path, monkeypatch) -> None:
    from heraldbench.pipelines.tracking import Target, ui_base

    monkeypatch.setenv("HERALDBENCH_MLFLOW_UI_URL", "http://127.0.0.1:9")  # nothing listens
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert ui_base(uri, "abc") is None and Target(uri, "1", "abc").url() is None
    assert ui_base("http://mlflow:5000/", "abc") == "http://mlflow:5000"


def test_series_that_stay_zero_are_not_logged() -> None:
    metrics, _ = series_metrics({"allreduce": np.zeros(5), "hits": np.ones(5)}, cap=10)
    assert {m.key for m in metrics} == {"iteration/hits"}


def test_short_series_are_logged_at_every_iteration() -> None:
    metrics, stride = series_metrics({"hits": np.arange(5.0)}, cap=10)
    assert stride == 1
    assert [(m.key, m.step, m.value) for m in metrics] == [
        ("iteration/hits", i, float(i)) for i in range(5)
    ]


@pytest.mark.parametrize("length", [11, 25, 1000])
def test_long_series_are_window_means_within_the_cap(length) -> None:
    values = np.arange(length, dtype=float)
    metrics, stride = series_metrics({"hits": values}, cap=10)
    assert len(metrics) <= 10 and stride == -(-length // 10)
    steps = [m.step for m in metrics]
    assert steps == list(range(0, length, stride))
    assert metrics[0].value == pytest.approx(values[:stride].mean())
    assert metrics[-1].value == pytest.approx(values[steps[-1] :].mean())
