"""Settings from the environment, and the ``heraldbench serve`` command."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from heraldbench.api.core.config import Settings


def test_settings_read_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HERALDBENCH_HOME", str(tmp_path))
    monkeypatch.setenv(
        "HERALDBENCH_DATA_DIRS", f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'},{tmp_path / 'c'}"
    )
    monkeypatch.setenv("HERALDBENCH_API_TOKEN", "t0ken")
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://scheduler:8786")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://mlflow:5000")
    settings = Settings()
    assert settings.data_dirs == (tmp_path / "a", tmp_path / "b", tmp_path / "c")
    assert settings.api_token.get_secret_value() == "t0ken" and settings.auth_required
    assert settings.dask_scheduler_address == "tcp://scheduler:8786"
    assert settings.resolved_tracking_uri == "http://mlflow:5000"
    assert settings.resolved_database_url == f"sqlite:///{tmp_path / 'heraldbench.db'}"


def test_embedded_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (
        "HERALDBENCH_DATABASE_URL",
        "MLFLOW_TRACKING_URI",
        "HERALDBENCH_API_TOKEN",
        "DASK_SCHEDULER_ADDRESS",
        "HERALDBENCH_OPTUNA_STORAGE",
        "HERALDBENCH_DATA_DIRS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HERALDBENCH_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    assert settings.dask_scheduler_address is None and settings.api_token is None
    assert settings.resolved_tracking_uri == f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert settings.resolved_optuna_storage == f"sqlite:///{tmp_path / 'optuna.db'}"
    assert settings.allowed_roots[0] == (tmp_path / "data").resolve()


def test_an_empty_token_means_no_auth_and_relative_sqlite_is_absolute(tmp_path: Path) -> None:
    settings = Settings(api_token="", database_url="sqlite:///rel/app.db", home=tmp_path)
    assert settings.api_token is None and not settings.auth_required
    assert settings.resolved_database_url == f"sqlite:///{Path('rel/app.db').resolve()}"


def test_serve_is_one_of_the_heraldbench_commands() -> None:
    from heraldbench.api.cli import app

    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("serve", "run", "simulate", "preprocess", "quickstart"):
        assert command in result.output
    assert "--port" in CliRunner().invoke(app, ["serve", "--help"]).output


def test_home_is_not_read_from_the_users_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``$HOME`` (and bare field names such as ``TRACK``) configure nothing."""
    monkeypatch.delenv("HERALDBENCH_HOME", raising=False)
    monkeypatch.delenv("HERALDBENCH_TRACK", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("TRACK", "false")
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    assert settings.home_dir == tmp_path / ".heraldbench"
    assert settings.track
    for url in (
        settings.resolved_database_url,
        settings.resolved_tracking_uri,
        settings.resolved_optuna_storage,
    ):
        assert url == f"sqlite:///{tmp_path / '.heraldbench' / Path(url).name}"
    assert settings.prepared_root == tmp_path / ".heraldbench" / "prepared"
    monkeypatch.setenv("HERALDBENCH_HOME", str(tmp_path / "elsewhere"))
    assert Settings().home_dir == tmp_path / "elsewhere"
