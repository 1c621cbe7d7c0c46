"""Health and configuration: what the UI needs to know before it shows anything."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from importlib import metadata
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from heraldbench.api.bodies import StrictJSONRoute
from heraldbench.api.deps import DatabaseDep, DispatcherDep, SettingsDep
from heraldbench.api.planning import trainer_available
from heraldbench.api.schemas import ConfigOut, Health
from heraldbench.api.worker import TUNE_MODULE
from heraldbench.platform.exceptions import UnavailableError
from heraldbench.platform.schedulers import registered
from heraldbench.platform.timemodel import PROFILES

__all__ = ["router"]

logger = logging.getLogger("heraldbench.api")

# Open even under HERALDBENCH_PROTECT_READS: a liveness probe carries no token, and the UI reads
# /config to learn that it must ask for one.
router = APIRouter(route_class=StrictJSONRoute, tags=["health"])

_DASK_TIMEOUT_S = 2.0


def _version() -> str:
    try:
        return metadata.version("heraldbench")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@router.get(
    "/health",
    response_model=Health,
    responses={503: {"model": Health, "description": "the app database cannot be used"}},
)
async def health(db: DatabaseDep, dispatcher: DispatcherDep, response: Response) -> Health:
    """Whether the database and the Dask scheduler answer; 503 without a usable database (its
    SQLite file deleted or replaced included). Without Dask, submissions wait queued: 200."""
    problem = None
    try:
        await run_in_threadpool(db.ping)
        database = "ok"
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        logger.warning("app database unavailable: %s", exc)
        database = "unavailable"
        problem = str(exc) if isinstance(exc, UnavailableError) else type(exc).__name__
        response.status_code = 503
    dask = "unavailable"
    if dispatcher.available:
        try:
            await asyncio.wait_for(dispatcher.client.scheduler.identity(), _DASK_TIMEOUT_S)
            dask = "ok"
        except Exception as exc:  # noqa: BLE001 - reported as unavailable
            logger.info("Dask scheduler did not answer: %s", exc)
    status = "ok" if database == "ok" else "unhealthy"
    return Health(status=status, database=database, dask=dask, version=_version(),
                  problem=problem)  # fmt: skip


def _knob_defaults(spec_cls: Any) -> dict[str, Any]:
    from fastapi.encoders import jsonable_encoder

    return {
        name: jsonable_encoder(field.default)
        for name, field in spec_cls.model_fields.items()
        if name != "kind"
    }


def _tuning_available() -> bool:
    try:
        return importlib.util.find_spec(TUNE_MODULE) is not None
    except (ImportError, ValueError):
        return False


def _mlflow_ui(request: Request, settings: Any) -> tuple[str | None, str]:
    """The MLflow UI's link and state: the one the service serves (mlflow_ui.py) once it
    answers, the one it was told of, or the tracking server."""
    served = request.app.state.mlflow_ui
    if served is not None:
        return (served.url if served.state == "ready" else None), served.state
    uri = settings.resolved_tracking_uri
    url = settings.mlflow_ui_url or (uri if uri and uri.startswith("http") else None)
    return url, "external" if url else "none"


@router.get("/config", response_model=ConfigOut)
def config(request: Request, settings: SettingsDep, dispatcher: DispatcherDep) -> ConfigOut:
    """Auth, links to MLflow and the Dask dashboard, scheduler knobs, hardware profiles."""
    mlflow_ui, mlflow_state = _mlflow_ui(request, settings)
    return ConfigOut(
        auth_required=settings.auth_required,
        home=str(settings.home_dir),
        mlflow_ui_url=mlflow_ui,
        mlflow_ui_state=mlflow_state,
        dask_dashboard_url=dispatcher.dashboard_link(),
        schedulers={kind: _knob_defaults(cls.spec_cls) for kind, cls in registered().items()},
        profiles=list(PROFILES),
        data_dirs=[str(p) for p in settings.allowed_roots],
        tuning_available=_tuning_available(),
        training_available=trainer_available(),
    )
