"""The MLflow UI the service serves on its local store: MLflow's own app, read-only and behind
the service's token, in a process that dies with the service.

MLflow lets a server host another app (``mlflow server --app-name``, entry point group
``mlflow.app``); its own ``basic-auth`` app asks for user names and passwords, not a bearer
token, and MLflow has no read-only mode. This entry point (``heraldbench-readonly``) wraps
MLflow's app (``mlflow.server.fastapi_app``) in :class:`ReadOnlyGuard`:

* reads only: GET and HEAD, and the POSTs by which the UI searches (a path ending in
  ``/search``, ``/batchGetInfos`` or ``/metrics``); every other request (create, update, delete,
  log, invoke) is a 403: runs are logged to the store directly, never through this server;
* the token: with ``HERALDBENCH_PROTECT_READS`` and a token set, a request (but ``/health``,
  which says only that the server answers) must carry it as ``Authorization: Bearer`` or as the
  ``heraldbench_token`` cookie the service's web UI sets (cookies are per host, so the UI's
  cookie reaches this port too);
* the process exits when its parent (MLflow's launcher, :mod:`heraldbench.api.mlflow_child`)
  does, through the kernel's parent-death signal.
"""

from __future__ import annotations

import os
import secrets
from http.cookies import SimpleCookie
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from heraldbench.api.lifetime import die_with_parent

__all__ = ["COOKIE", "PROTECT_ENV", "TOKEN_ENV", "ReadOnlyGuard", "create_app", "is_read"]

COOKIE = "heraldbench_token"
TOKEN_ENV = "HERALDBENCH_MLFLOW_UI_TOKEN"
PROTECT_ENV = "HERALDBENCH_MLFLOW_UI_PROTECT_READS"
_READ_POSTS = ("/search", "/batchGetInfos", "/metrics")


def is_read(method: str, path: str) -> bool:
    """Whether a request to MLflow's server only reads (module docstring)."""
    if method in ("GET", "HEAD", "OPTIONS"):
        return True
    return method == "POST" and path.rstrip("/").endswith(_READ_POSTS)


def _token_of(headers: Headers) -> str:
    authorization = headers.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    cookie: SimpleCookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:  # noqa: BLE001 - a malformed cookie header carries no token
        return ""
    morsel = cookie.get(COOKIE)
    from urllib.parse import unquote

    return unquote(morsel.value) if morsel is not None else ""


class ReadOnlyGuard:
    """Lets reads through to ``app``, refuses changes, and asks for ``token`` when set."""

    def __init__(self, app: ASGIApp, token: str | None = None) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not is_read(scope["method"], scope.get("path", "")):
            reason = "this MLflow UI is read-only: runs are logged by heraldbench, not through it"
            await JSONResponse({"detail": reason}, 403)(scope, receive, send)
            return
        if self.token is not None and scope.get("path") != "/health":  # liveness: no data
            given = _token_of(Headers(scope=scope))
            if not secrets.compare_digest(given.encode(), self.token.encode()):
                reason = "the service's API token is required (HERALDBENCH_PROTECT_READS)"
                response = JSONResponse({"detail": reason}, 401)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app() -> Any:
    """MLflow's app behind the guard (the factory ``mlflow server --app-name`` starts)."""
    die_with_parent()
    from mlflow.server.fastapi_app import app

    protect = os.environ.get(PROTECT_ENV) == "true"
    token = os.environ.get(TOKEN_ENV) or None
    return ReadOnlyGuard(app, token if protect else None)
