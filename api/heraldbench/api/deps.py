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

__all__ = ["DatabaseDep", "DispatcherDep", "SettingsDep", "require_read", "require_write"]

_bearer = HTTPBearer(
    auto_error=False, description="HERALDBENCH_API_TOKEN, when the service sets one"
)


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_database(request: Request) -> Database:
    return request.app.state.database


def get_dispatcher(request: Request) -> Dispatcher:
    return request.app.state.dispatcher


SettingsDep = Annotated[Settings, Depends(get_settings)]
DatabaseDep = Annotated[Database, Depends(get_database)]
DispatcherDep = Annotated[Dispatcher, Depends(get_dispatcher)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


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


def require_read(settings: SettingsDep, credentials: Credentials) -> None:
    """Reads: open, unless ``HERALDBENCH_PROTECT_READS`` is set as well."""
    if settings.protect_reads:
        _check(settings, credentials)
