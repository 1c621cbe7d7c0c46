"""Datasets: register a raw file under a data folder, prepare it on Dask, read its stats."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response
from sqlalchemy import func, select
from starlette.concurrency import run_in_threadpool

from heraldbench.api.bodies import StrictJSONRoute
from heraldbench.api import worker
from heraldbench.api.core.config import Settings
from heraldbench.api.core.db import Database
from heraldbench.api.crud import new_key
from heraldbench.api.deps import (
    DatabaseDep,
    DispatcherDep,
    SettingsDep,
    require_read,
    require_write,
)
from heraldbench.api.models import Dataset, Status
from heraldbench.api.planning import confine_file
from heraldbench.api.routes.common import ERRORS, WRITE_ERRORS, RowId
from heraldbench.api.schemas import Accepted, DatasetCreate, DatasetOut, DatasetsPage
from heraldbench.api.views import dataset_out
from heraldbench.platform.exceptions import NotFoundError

__all__ = ["router"]

router = APIRouter(route_class=StrictJSONRoute, prefix="/datasets", tags=["datasets"])


def _register(db: Database, settings: Settings, body: DatasetCreate) -> tuple[int, str]:
    path = confine_file(body.path, settings, "path")
    options = {"frequency_threshold": body.frequency_threshold, "max_samples": body.max_samples}
    key = new_key("dataset")
    with db.write() as session:
        dataset = Dataset(
            name=body.name,
            kind=body.kind,
            path=str(path),
            options=options,
            status=Status.QUEUED,
            dask_key=key,
        )
        session.add(dataset)
        session.flush()
        # One folder per registration: two registrations never write the same files.
        dataset.prepared_path = str(settings.prepared_root / f"{dataset.id}-{body.name}")
        return dataset.id, key


@router.post(
    "",
    status_code=202,
    response_model=Accepted,
    dependencies=[Depends(require_write)],
    responses=WRITE_ERRORS,
)
async def register_dataset(
    body: DatasetCreate,
    response: Response,
    db: DatabaseDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
) -> Accepted:
    """Register a raw file (criteo-tsv, avazu-csv, movielens) and start preprocessing it."""
    dataset_id, key = await run_in_threadpool(_register, db, settings, body)
    dispatcher.submit_job(worker.preprocess_dataset, dataset_id, key)
    location = f"/api/datasets/{dataset_id}"
    response.headers["Location"] = location
    return Accepted(id=dataset_id, status=Status.QUEUED, location=location)


@router.get("", response_model=DatasetsPage, dependencies=[Depends(require_read)], responses=ERRORS)
def list_datasets(
    db: DatabaseDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
) -> DatasetsPage:
    """Registered datasets, newest first."""
    with db.read() as session:
        total = session.scalar(select(func.count(Dataset.id))) or 0
        rows = session.scalars(
            select(Dataset).order_by(Dataset.id.desc()).limit(limit).offset(offset)
        )
        return DatasetsPage(data=[dataset_out(r) for r in rows], count=total)


@router.get(
    "/{dataset_id}",
    response_model=DatasetOut,
    dependencies=[Depends(require_read)],
    responses=ERRORS,
)
def get_dataset(dataset_id: RowId, db: DatabaseDep) -> DatasetOut:
    """One dataset: status, stats (samples, rows per table, shards) and its prepared path."""
    with db.read() as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is None:
            raise NotFoundError(f"dataset {dataset_id} does not exist")
        return dataset_out(dataset)
