"""Experiments: submit a (grid) spec, list, read one with its runs, cancel."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response
from pydantic import WithJsonSchema
from starlette.concurrency import run_in_threadpool

from heraldbench.api.bodies import StrictJSONRoute
from heraldbench.api import crud
from heraldbench.api.deps import (
    DatabaseDep,
    DispatcherDep,
    RunMemoryDep,
    SettingsDep,
    require_read,
    require_write,
)
from heraldbench.api.models import Status
from heraldbench.api.openapi import GRID_REF
from heraldbench.api.planning import plan_experiment
from heraldbench.api.routes.common import ERRORS, WRITE_ERRORS, RowId
from heraldbench.api.schemas import Accepted, ExperimentDetail, ExperimentsPage, ExperimentSummary
from heraldbench.api.views import experiment_detail, experiment_summary

__all__ = ["router"]

router = APIRouter(
    route_class=StrictJSONRoute, prefix="/experiments", tags=["experiments"]
)

_EXAMPLE = {  # examples/small.yaml: seconds per run
    "name": "small",
    "dataset": {"kind": "synthetic", "profile": "criteo-kaggle", "samples": 200000, "scale": 0.01,
                "seed": 1},
    "cluster": {"workers": 4, "batch_size": 128},
    "cache": {"ratio": 0.1},
    "schedulers": [{"kind": "naive"}, {"kind": "herald", "lookahead": [1, 2]}],
}
SpecBody = Annotated[
    dict[str, Any],
    WithJsonSchema(GRID_REF),  # read as a mapping, so that a 422 names fields as submitted
    Body(
        description="an experiment spec; lists of knob values make a grid (docs/api.md)",
        openapi_examples={
            "small": {"summary": "naive vs Herald at two lookaheads", "value": _EXAMPLE}
        },
    ),
]
IdempotencyKey = Annotated[
    str | None,
    Header(max_length=200, description="optional: a retried POST with the same key lands once"),
]


@router.post(
    "",
    status_code=202,
    response_model=Accepted,
    dependencies=[Depends(require_write)],
    responses=WRITE_ERRORS,
)
async def submit_experiment(
    request: Request,
    response: Response,
    document: SpecBody,
    db: DatabaseDep,
    dispatcher: DispatcherDep,
    settings: SettingsDep,
    memory: RunMemoryDep,
    idempotency_key: IdempotencyKey = None,
) -> Accepted:
    """Validate, store (one transaction) and hand every run to Dask; 202 with its location."""
    request.state.document = document  # lets a 422 name fields by the submitted document
    grid = await run_in_threadpool(plan_experiment, document, settings, memory)
    experiment_id, refs, created = await run_in_threadpool(
        crud.create_experiment, db, grid=grid, document=document, client_key=idempotency_key
    )
    if created:
        await dispatcher.submit_runs(experiment_id, refs)
    location = f"/api/experiments/{experiment_id}"
    response.headers["Location"] = location
    status = Status.QUEUED
    if not created:
        status = (
            await run_in_threadpool(
                crud.get_experiment, db, experiment_id=experiment_id, with_runs=False
            )
        ).status
    return Accepted(id=experiment_id, status=status, location=location)


@router.get(
    "", response_model=ExperimentsPage, dependencies=[Depends(require_read)], responses=ERRORS
)
def list_experiments(
    db: DatabaseDep,
    status: Status | None = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
) -> ExperimentsPage:
    """Experiments newest first, optionally only those with ``status``."""
    rows, total = crud.list_experiments(db, status=status, limit=limit, offset=offset)
    return ExperimentsPage(data=[experiment_summary(r) for r in rows], count=total)


@router.get(
    "/{experiment_id}",
    response_model=ExperimentDetail,
    dependencies=[Depends(require_read)],
    responses=ERRORS,
)
def get_experiment(
    experiment_id: RowId, db: DatabaseDep, settings: SettingsDep
) -> ExperimentDetail:
    """One experiment with its spec, status, progress and every run's results."""
    return experiment_detail(crud.get_experiment(db, experiment_id=experiment_id), settings)


def _archive(db: Any, settings: Any, experiment_id: int) -> tuple[str, bytes]:
    from heraldbench.api.archive import experiment_archive

    experiment = crud.get_experiment(db, experiment_id=experiment_id)
    detail = experiment_detail(experiment, settings).model_dump(mode="json")
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", experiment.name)
    return f"experiment-{experiment_id}-{name}.zip", experiment_archive(experiment, detail)


@router.get(
    "/{experiment_id}/archive",
    response_class=Response,
    dependencies=[Depends(require_read)],
    responses={**ERRORS, 200: {"content": {"application/zip": {}},
                               "description": "results.json and the report"}},  # fmt: skip
)
async def download_experiment(
    experiment_id: RowId, db: DatabaseDep, settings: SettingsDep
) -> Response:
    """One zip: results.json, and per (point, seed) the report (Table 1 and the comparison as
    markdown, comparison.csv, their charts)."""
    filename, content = await run_in_threadpool(_archive, db, settings, experiment_id)
    return Response(
        content,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.post(
    "/{experiment_id}/cancel",
    response_model=ExperimentSummary,
    dependencies=[Depends(require_write)],
    responses=WRITE_ERRORS,
)
async def cancel_experiment(
    experiment_id: RowId, db: DatabaseDep, dispatcher: DispatcherDep
) -> ExperimentSummary:
    """Cancel an experiment's queued and running runs (a finished experiment is unchanged)."""
    experiment, keys = await run_in_threadpool(
        crud.cancel_experiment, db, experiment_id=experiment_id
    )
    await dispatcher.cancel(keys)
    return experiment_summary(experiment)
