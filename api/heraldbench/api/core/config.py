"""Settings of the service, read from the environment (pydantic-settings).

Every setting has an embedded default, so ``heraldbench serve`` needs nothing to start: a SQLite
app database and a MLflow SQLite store under ``$HERALDBENCH_HOME`` (default ``./.heraldbench``)
and a Dask ``LocalCluster`` started with the service.

==============================  =====================================================
environment variable            meaning
==============================  =====================================================
HERALDBENCH_DATABASE_URL        app database (``sqlite:///...``, ``postgresql+psycopg://...``)
DASK_SCHEDULER_ADDRESS          an existing Dask scheduler; unset = a LocalCluster
MLFLOW_TRACKING_URI             MLflow store or server; unset = ``$HERALDBENCH_HOME/mlflow.db``
HERALDBENCH_OPTUNA_STORAGE      Optuna RDB for studies; unset = ``$HERALDBENCH_HOME/optuna.db``
HERALDBENCH_API_TOKEN           bearer token required by mutating endpoints (unset = open)
HERALDBENCH_PROTECT_READS       also require the token on reads (default false)
HERALDBENCH_DATA_DIRS           folders dataset paths must lie under (``os.pathsep``-separated
                                or comma-separated; default ``./data``)
HERALDBENCH_TRACK               log runs to MLflow (default true)
HERALDBENCH_LOCAL_WORKERS       LocalCluster worker processes (default 2)
HERALDBENCH_SERVE_MLFLOW        serve MLflow's UI on a local store as a child process (default
                                true; see mlflow_ui.py), on HERALDBENCH_MLFLOW_UI_PORT (5000)
HERALDBENCH_MLFLOW_UI_URL       where MLflow's UI is, when it runs elsewhere
HERALDBENCH_MAX_BODY_BYTES      largest request body accepted (default 1 MiB; larger: 413)
HERALDBENCH_TRUSTED_HOSTS       Host names the service answers (comma-separated; default the
                                loopback names localhost, 127.0.0.1, ::1; ``*`` for any)
HERALDBENCH_DASHBOARD_ADDRESS   the LocalCluster's Dask dashboard (default 127.0.0.1:8787)
HERALDBENCH_RUN_MEMORY          memory one run may use (``8GiB``); unset = the smallest Dask
                                worker's memory limit, else this machine's memory
==============================  =====================================================
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

__all__ = ["Settings", "get_settings"]


def _env(name: str) -> AliasChoices:
    return AliasChoices(name, name.lower())


class Settings(BaseSettings):
    """The service's configuration; build one explicitly in tests, else :func:`get_settings`."""

    # Fields are read only from the names in the table above: a field's own name (allowed so
    # tests can pass ``Settings(home=...)``) would otherwise be read from the environment as
    # well, and ``home`` from ``$HOME``. The prefix makes that ``HERALDBENCH_HOME``.
    model_config = SettingsConfigDict(
        extra="ignore", populate_by_name=True, frozen=True, env_prefix="HERALDBENCH_"
    )

    home: Path = Field(Path(".heraldbench"), validation_alias=_env("HERALDBENCH_HOME"))
    database_url: str | None = Field(None, validation_alias=_env("HERALDBENCH_DATABASE_URL"))
    dask_scheduler_address: str | None = Field(
        None, validation_alias=_env("DASK_SCHEDULER_ADDRESS")
    )
    mlflow_tracking_uri: str | None = Field(None, validation_alias=_env("MLFLOW_TRACKING_URI"))
    mlflow_ui_url: str | None = Field(None, validation_alias=_env("HERALDBENCH_MLFLOW_UI_URL"))
    optuna_storage: str | None = Field(None, validation_alias=_env("HERALDBENCH_OPTUNA_STORAGE"))
    api_token: SecretStr | None = Field(None, validation_alias=_env("HERALDBENCH_API_TOKEN"))
    protect_reads: bool = Field(False, validation_alias=_env("HERALDBENCH_PROTECT_READS"))
    data_dirs: Annotated[tuple[Path, ...], NoDecode] = Field(
        (Path("data"),), validation_alias=_env("HERALDBENCH_DATA_DIRS")
    )
    track: bool = Field(True, validation_alias=_env("HERALDBENCH_TRACK"))
    dask_connect_timeout: float = Field(
        15.0, gt=0, validation_alias=_env("HERALDBENCH_DASK_CONNECT_TIMEOUT")
    )
    local_workers: int = Field(2, ge=1, validation_alias=_env("HERALDBENCH_LOCAL_WORKERS"))
    local_processes: bool = Field(True, validation_alias=_env("HERALDBENCH_LOCAL_PROCESSES"))
    dashboard_address: str | None = Field(
        "127.0.0.1:8787", validation_alias=_env("HERALDBENCH_DASHBOARD_ADDRESS")
    )
    trusted_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        ("localhost", "127.0.0.1", "::1"), validation_alias=_env("HERALDBENCH_TRUSTED_HOSTS")
    )
    #: Seconds between checks for runs whose Dask task is gone (see recovery.py).
    reconcile_seconds: float = Field(
        30.0, gt=0, validation_alias=_env("HERALDBENCH_RECONCILE_SECONDS")
    )
    #: A queued or running row younger than this is never judged orphaned (its submission may
    #: have committed a moment before its Dask task was submitted).
    orphan_grace_seconds: float = Field(
        60.0, ge=0, validation_alias=_env("HERALDBENCH_ORPHAN_GRACE_SECONDS")
    )
    serve_mlflow: bool = Field(True, validation_alias=_env("HERALDBENCH_SERVE_MLFLOW"))
    mlflow_ui_port: int = Field(
        5000, ge=0, le=65535, validation_alias=_env("HERALDBENCH_MLFLOW_UI_PORT")
    )
    max_body_bytes: int = Field(
        1024 * 1024, ge=1024, validation_alias=_env("HERALDBENCH_MAX_BODY_BYTES")
    )
    web_dir: Path | None = Field(None, validation_alias=_env("HERALDBENCH_WEB_DIR"))
    #: Bytes one run may use; submissions whose estimate is larger are refused (resources.py).
    run_memory: int | None = Field(None, validation_alias=_env("HERALDBENCH_RUN_MEMORY"))

    @field_validator("run_memory", mode="before")
    @classmethod
    def _byte_size(cls, value: object) -> object:
        from heraldbench.platform.units import parse_bytes

        return parse_bytes(value) if isinstance(value, str) and value.strip() else value or None

    @field_validator("data_dirs", mode="before")
    @classmethod
    def _split_dirs(cls, value: object) -> object:
        if isinstance(value, str):
            parts = [p.strip() for chunk in value.split(",") for p in chunk.split(os.pathsep)]
            return tuple(Path(p) for p in parts if p)
        return value

    @field_validator("trusted_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(p.strip() for p in value.split(",") if p.strip())
        return value

    @field_validator("api_token", mode="after")
    @classmethod
    def _empty_token_is_none(cls, value: SecretStr | None) -> SecretStr | None:
        return value if value is not None and value.get_secret_value() else None

    @property
    def home_dir(self) -> Path:
        """``home`` as an absolute path, created."""
        folder = self.home.expanduser().resolve()
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    @property
    def resolved_database_url(self) -> str:
        """The app database; a relative SQLite path is made absolute (workers may run elsewhere)."""
        url = self.database_url or f"sqlite:///{self.home_dir / 'heraldbench.db'}"
        prefix = "sqlite:///"
        if url.startswith(prefix) and not url.startswith(prefix + "/") and ":memory:" not in url:
            url = prefix + str(Path(url[len(prefix) :]).resolve())
        return url

    @property
    def resolved_tracking_uri(self) -> str | None:
        """Where runs are logged, or None when tracking is off."""
        if not self.track:
            return None
        return self.mlflow_tracking_uri or f"sqlite:///{self.home_dir / 'mlflow.db'}"

    @property
    def resolved_optuna_storage(self) -> str:
        return self.optuna_storage or f"sqlite:///{self.home_dir / 'optuna.db'}"

    @property
    def allowed_roots(self) -> tuple[Path, ...]:
        """Folders a dataset path may lie under: the data folders and the prepared-data folder."""
        return tuple(p.expanduser().resolve() for p in self.data_dirs) + (self.prepared_root,)

    @property
    def prepared_root(self) -> Path:
        """Where registered datasets are prepared (``$HERALDBENCH_HOME/prepared``)."""
        return self.home_dir / "prepared"

    @property
    def auth_required(self) -> bool:
        return self.api_token is not None


@lru_cache
def get_settings() -> Settings:
    """The settings of this process, read once from the environment."""
    return Settings()
