"""Dependencies of the routes: settings, database, Dask dispatcher, and the bearer token check.

The app's state is set up by the lifespan (main.py); these read it from ``request.app.state``,
so tests build an app with their own settings and nothing global leaks between apps.
"""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from heraldbench.api.core.config import Settings
from heraldbench.api.core.db import Database
from heraldbench.api.dispatch import Dispatcher

__all__ = [
    "BEARER", "READ_BEARER", "DatabaseDep", "DispatcherDep", "RunMemoryDep", "SettingsDep",
    "require_read", "require_write",
]

BEARER = "bearer"
READ_BEARER = "bearer-on-reads"

_bearer = HTTPBearer(
    auto_error=False,
    scheme_name=BEARER,
    description="HERALDBENCH_API_TOKEN, when the service sets one",
)
#: The same token, asked for on reads: declared in the OpenAPI document only where it is
#: enforced (``HERALDBENCH_PROTECT_READS``; openapi.py).
_read_bearer = HTTPBearer(auto_error=False, scheme_name=READ_BEARER)


def get_settings(request: Request) -> Settings:
    """The service's settings; while the MLflow UI it serves does not answer yet, without its
    address, so that no link is given before it opens (mlflow_ui.py)."""
    settings: Settings = request.app.state.settings
    served = getattr(request.app.state, "mlflow_ui", None)
    if served is not None and served.state != "ready" and settings.mlflow_ui_url:
        return settings.model_copy(update={"mlflow_ui_url": None})
    return settings


def get_database(request: Request) -> Database:
    return request.app.state.database


def get_dispatcher(request: Request) -> Dispatcher:
    return request.app.state.dispatcher


def get_run_memory(request: Request) -> int | None:
    """Bytes one run may use on the cluster the service submits to (None: this machine's
    memory applies; also where no cluster is connected yet)."""
    dispatcher = getattr(request.app.state, "dispatcher", None)
    return dispatcher.worker_memory() if dispatcher is not None else None


SettingsDep = Annotated[Settings, Depends(get_settings)]
RunMemoryDep = Annotated[int | None, Depends(get_run_memory)]
DatabaseDep = Annotated[Database, Depends(get_database)]
DispatcherDep = Annotated[Dispatcher, Depends(get_dispatcher)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
ReadCredentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_read_bearer)]


def _check(settings: Settings, credentials: HTTPAuthorizationCredentials | None) -> None:
    expected = settings.api_token
    if expected is None:
        return
    given = credentials.credentials if credentials is not None else ""
    if not secrets.compare_digest(given.encode(), expected.get_secret_value().encode()):
        raise HTTPException(
            status_code=401,
            detail="a valid bearer token is required (Authorization: Bearer <token>)",
            headers={"WWW-Authenticate": "Bearer"},
        )


def require_write(settings: SettingsDep, credentials: Credentials) -> None:
    """Mutating endpoints: the token is required whenever ``HERALDBENCH_API_TOKEN`` is set."""
    _check(settings, credentials)


def require_read(settings: SettingsDep, credentials: ReadCredentials) -> None:
    """Reads: open, unless ``HERALDBENCH_PROTECT_READS`` is set as well."""
    if settings.protect_reads:
        _check(settings, credentials)
