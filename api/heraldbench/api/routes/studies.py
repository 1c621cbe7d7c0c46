"""Studies (tuning with Optuna): the integration point for the tuning pipeline.

The endpoints, table and schemas are complete; the work is done by ``heraldbench.pipelines.tune``
when it is installed. Until then ``POST /api/studies`` answers **501**. The module must offer:

``validate(document: dict) -> dict``
    Check a spec with a ``tuning`` section, raising :class:`SpecError` (422, naming the field)
    when it is invalid; return at least ``{"name": str, "directions": ["minimize", ...]}``.
``run_study(document: dict, *, storage: str, study_name: str, client, stop, track, uri) -> dict``
    Run the study on Dask through ``client`` (the task secedes via ``worker_client``), with the
    Optuna RDB ``storage`` (``HERALDBENCH_OPTUNA_STORAGE``), logging to the service's MLflow store
    ``uri`` when ``track``; return
    ``{"trials": [{"number", "state", "params", "values"}], "best": [{"params", "values"}],
    "plots": {"history" | "importances" | "pareto": file path}}``.

The task (:func:`heraldbench.api.worker.run_study`) stores that summary on the study's row, so
reading a study never touches Optuna.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, HTTPException, Query, Request, Response
from fastapi.responses import FileResponse
from pydantic import WithJsonSchema
from sqlalchemy import func, select
from starlette.concurrency import run_in_threadpool

from heraldbench.api.bodies import StrictJSONRoute
from heraldbench.api import worker
from heraldbench.api.core.db import Database
from heraldbench.api.crud import new_key
from heraldbench.api.deps import (
    DatabaseDep,
    DispatcherDep,
    RunMemoryDep,
    SettingsDep,
    require_read,
    require_write,
)
from heraldbench.api.models import Status, Study
from heraldbench.api.openapi import SPEC_REF
from heraldbench.api.planning import plan_study
from heraldbench.api.routes.common import ERRORS, WRITE_ERRORS, RowId
from heraldbench.api.schemas import Accepted, Message, StudiesPage, StudyOut
from heraldbench.api.views import study_out
from heraldbench.platform.exceptions import NotFoundError

__all__ = ["router", "tuning_pipeline"]

router = APIRouter(route_class=StrictJSONRoute, prefix="/studies", tags=["studies"])

#: A study's spec: one spec (no grid), with its tuning section.
STUDY_SCHEMA = {
    "allOf": [SPEC_REF], "required": ["tuning"], "properties": {"tuning": {"type": "object"}}
}
NOT_IMPLEMENTED = (
    "tuning needs the tuning pipeline (heraldbench.pipelines.tune), which this installation "
    "lacks; experiments (POST /api/experiments) work without it"
)


def tuning_pipeline() -> Any | None:
    """The tuning pipeline's module, or None when it is not installed."""
    try:
        if importlib.util.find_spec(worker.TUNE_MODULE) is None:
            return None
    except (ImportError, ValueError):
        return None
    return importlib.import_module(worker.TUNE_MODULE)


def _create(db: Database, document: dict[str, Any], checked: dict[str, Any]) -> tuple[int, str]:
    key = new_key("study")
    with db.write() as session:
        study = Study(
            name=str(checked.get("name", document.get("name", "study"))),
            spec=document,
            directions=list(checked.get("directions", [])),
            status=Status.QUEUED,
            storage_name=new_key("study"),
            dask_key=key,
        )
        session.add(study)
        session.flush()
        return study.id, key


@router.post(
    "",
    status_code=202,
    response_model=Accepted,
    dependencies=[Depends(require_write)],
    responses={**WRITE_ERRORS, 501: {"model": Message, "description": "no tuning pipeline"}},
)
async def submit_study(
    request: Request,
    response: Response,
    document: Annotated[
        dict[str, Any],
        WithJsonSchema(STUDY_SCHEMA),
        Body(description="an experiment spec with a tuning section"),
    ],
    db: DatabaseDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    memory: RunMemoryDep,
) -> Accepted:
    """Start a tuning study (501 until the tuning pipeline is installed)."""
    tune = tuning_pipeline()
    if tune is None:
        raise HTTPException(status_code=501, detail=NOT_IMPLEMENTED)
    request.state.document = document
    _, stored = await run_in_threadpool(plan_study, document, settings, memory)
    checked = await run_in_threadpool(tune.validate, stored)
    study_id, key = await run_in_threadpool(_create, db, stored, checked)
    dispatcher.submit_job(
        worker.run_study, study_id, key, settings.resolved_optuna_storage,
        settings.resolved_tracking_uri,
    )  # fmt: skip
    location = f"/api/studies/{study_id}"
    response.headers["Location"] = location
    return Accepted(id=study_id, status=Status.QUEUED, location=location)


@router.get("", response_model=StudiesPage, dependencies=[Depends(require_read)], responses=ERRORS)
def list_studies(
    db: DatabaseDep,
    settings: SettingsDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
) -> StudiesPage:
    """Studies, newest first."""
    with db.read() as session:
        total = session.scalar(select(func.count(Study.id))) or 0
        rows = session.scalars(select(Study).order_by(Study.id.desc()).limit(limit).offset(offset))
        return StudiesPage(data=[study_out(r, settings) for r in rows], count=total)


def _study(db: Database, study_id: int) -> Study:
    with db.read() as session:
        study = session.get(Study, study_id)
        if study is None:
            raise NotFoundError(f"study {study_id} does not exist")
        return study


@router.get(
    "/{study_id}", response_model=StudyOut, dependencies=[Depends(require_read)], responses=ERRORS
)
def get_study(study_id: RowId, db: DatabaseDep, settings: SettingsDep) -> StudyOut:
    """One study: its trials (each with its MLflow run), best parameters and plots."""
    return study_out(_study(db, study_id), settings)


def _cancel(db: Database, study_id: int) -> tuple[Study, str | None]:
    with db.write() as session:
        study = session.get(Study, study_id, with_for_update=True)
        if study is None:
            raise NotFoundError(f"study {study_id} does not exist")
        key = None
        if study.status in Status.active():
            study.status, study.error, key = Status.CANCELLED, "cancelled by request", study.dask_key
        session.flush()
        session.expunge(study)
        return study, key


@router.post(
    "/{study_id}/cancel",
    response_model=StudyOut,
    dependencies=[Depends(require_write)],
    responses=WRITE_ERRORS,
)
async def cancel_study(
    study_id: RowId, db: DatabaseDep, dispatcher: DispatcherDep, settings: SettingsDep
) -> StudyOut:
    """Cancel a queued or running study: no trial starts, and running trials stop between
    iterations (within seconds); a finished study is unchanged."""
    study, key = await run_in_threadpool(_cancel, db, study_id)
    if key is not None:
        await dispatcher.set_event(worker.study_stop_event(key))
    return study_out(study, settings)


@router.get(
    "/{study_id}/plots/{name}",
    response_class=FileResponse,
    dependencies=[Depends(require_read)],
    responses=ERRORS,
)
def get_study_plot(
    study_id: RowId,
    name: Literal["history", "importances", "pareto"],
    db: DatabaseDep,
    settings: SettingsDep,
) -> FileResponse:
    """A plot the tuning pipeline wrote (only files under the service's home folder are served)."""
    path = (_study(db, study_id).plots or {}).get(name)
    resolved = Path(path).resolve() if path else None
    if resolved is None or not resolved.is_relative_to(settings.home_dir) or not resolved.is_file():
        raise NotFoundError(f"study {study_id} has no {name} plot")
    return FileResponse(resolved)
