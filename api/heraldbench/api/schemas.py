"""Request and response bodies (pydantic v2), as docs/api.md defines them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from heraldbench.api.models import Status
from heraldbench.platform.paths import NamesFile

__all__ = [
    "Accepted",
    "ConfigOut",
    "DatasetCreate",
    "DatasetOut",
    "DatasetsPage",
    "ExperimentDetail",
    "ExperimentSummary",
    "ExperimentsPage",
    "Health",
    "Message",
    "Preset",
    "Problem",
    "Problems",
    "Progress",
    "RunOut",
    "StudiesPage",
    "StudyOut",
    "Trial",
    "Validated",
]


def _as_utc(value: datetime) -> datetime:
    """SQLite returns naive datetimes; every stored time is UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


UtcDatetime = Annotated[datetime, AfterValidator(_as_utc)]
JSONObject = dict[str, Any]


class _Out(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class Problem(BaseModel):
    """One problem of a 422: the field (dotted path), what is wrong, and the value given."""

    field: str | None
    message: str
    value: Any = None


class Problems(BaseModel):
    detail: list[Problem]


class Message(BaseModel):
    detail: str


class Health(BaseModel):
    """``unhealthy`` (HTTP 503) when the app database cannot be used."""

    status: Literal["ok", "unhealthy"]
    database: Literal["ok", "unavailable"]
    dask: Literal["ok", "unavailable"]
    version: str
    problem: str | None = Field(
        None, description="why the database cannot be used, and how to recover"
    )


class ConfigOut(BaseModel):
    auth_required: bool
    home: str = Field(description="the service's data folder; the CLI's results are under it")
    mlflow_ui_url: str | None = Field(description="null until the MLflow UI answers")
    mlflow_ui_state: Literal["starting", "ready", "failed", "stopped", "external", "none"] = (
        Field(description="the UI the service serves: starting until it answers")
    )
    dask_dashboard_url: str | None
    schedulers: dict[str, dict[str, Any]]
    profiles: list[str]
    data_dirs: list[str]
    tuning_available: bool
    training_available: bool


class Preset(BaseModel):
    id: str
    title: str
    description: str
    spec: JSONObject


class Validated(BaseModel):
    """A valid spec: its first point with defaults filled in, and what the grid multiplies."""

    valid: Literal[True]
    spec: JSONObject
    runs: int
    axes: dict[str, list[Any]] = Field(description="grid axes outside the schedulers")
    scheduler_axes: list[str]
    seeds: list[Any]


class Accepted(BaseModel):
    id: int
    status: Status
    location: str


class Progress(BaseModel):
    done: int
    total: int


class ExperimentSummary(_Out):
    id: int
    name: str
    status: Status
    created_at: UtcDatetime
    updated_at: UtcDatetime
    progress: Progress
    mode: str
    schedulers: list[str]


class ExperimentsPage(BaseModel):
    data: list[ExperimentSummary]
    count: int


class RunOut(_Out):
    """One run; counts, bytes, bound and time follow ``RunResult.to_json``."""

    id: int
    experiment_id: int
    action: str
    scheduler: str
    label: str
    params: JSONObject
    point: JSONObject
    point_label: str
    seed: Any
    status: Status
    progress: float | None
    stage: str | None = None
    error: str | None
    traceback: str | None
    counts: JSONObject | None
    totals: JSONObject | None
    relative: dict[str, float | None]
    #: Beside placements: bytes per iteration per tier and comm time per profile, relative to
    #: the spec's baseline (``platform.sidebyside``); None in a group without placements.
    side_by_side: JSONObject | None = None
    bytes: JSONObject | None
    bound: JSONObject | None
    time: JSONObject | None
    metrics: dict[str, float | None] | None
    series: dict[str, list[float]]
    iterations: int | None
    baseline_added: bool
    wall_seconds: float | None
    worker: str | None
    mlflow_run_url: str | None
    tracking_error: str | None
    started_at: UtcDatetime | None
    finished_at: UtcDatetime | None


class ExperimentDetail(ExperimentSummary):
    spec: JSONObject
    error: str | None
    mlflow_url: str | None
    tracking_error: str | None
    runs: list[RunOut]


class Trial(BaseModel):
    number: int
    state: str
    params: JSONObject
    values: list[float] | None
    feasible: bool = Field(True, description="false: the trial breaks a constraint (a cap)")
    metrics: dict[str, float | None] = Field(default_factory=dict)
    error: str | None = None
    mlflow_run_id: str | None = Field(None, description="the trial's nested run in MLflow")
    mlflow_run_url: str | None = Field(None, description="that run in the MLflow UI")


class Best(BaseModel):
    params: JSONObject
    values: list[float] | None


class StudyOut(_Out):
    id: int
    name: str
    status: Status
    created_at: UtcDatetime
    updated_at: UtcDatetime
    directions: list[str]
    objectives: list[str] = Field(default_factory=list, description="what each value is")
    constraints: list[str] = Field(
        default_factory=list, description="the caps a trial must meet, e.g. cache_memory <= 64MiB"
    )
    trials: list[Trial]
    best: list[Best]
    plots: dict[str, str | None]
    mlflow_url: str | None = Field(None, description="the study's parent run in the MLflow UI")
    error: str | None


class StudiesPage(BaseModel):
    data: list[StudyOut]
    count: int


class DatasetCreate(BaseModel):
    """A raw file to register and prepare (the path must lie under a data folder)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
    kind: Literal["criteo-tsv", "avazu-csv", "movielens"]
    path: Annotated[str, NamesFile()] = Field(min_length=1, max_length=4096)
    frequency_threshold: int = Field(0, ge=0, le=1_000_000_000)
    max_samples: int | None = Field(None, ge=1, le=2**63 - 1)


class DatasetOut(_Out):
    id: int
    name: str
    kind: str
    path: str
    status: Status
    stats: JSONObject | None
    prepared_path: str | None
    spec: JSONObject | None = Field(None, description="the dataset section of a spec using it")
    error: str | None
    created_at: UtcDatetime
    updated_at: UtcDatetime


class DatasetsPage(BaseModel):
    data: list[DatasetOut]
    count: int
