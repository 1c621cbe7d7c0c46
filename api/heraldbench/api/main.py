"""The FastAPI app: ``create_app(settings)`` and its lifespan.

The lifespan opens the app database (creating its tables), connects to Dask (the scheduler at
``DASK_SCHEDULER_ADDRESS``, or a LocalCluster it starts and stops), migrates a local MLflow store
on a worker, reconciles rows left queued or running by an earlier process (recovery.py), and
keeps reconciling in the background. The web UI in ``web/`` is mounted at ``/`` last, so every
``/api`` route takes precedence.

Run one API process per database: each process reconciles and, without a scheduler address,
owns its own LocalCluster.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from importlib import metadata
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from heraldbench.api.core.config import Settings, get_settings
from heraldbench.api.core.db import Database
from heraldbench.api.dispatch import Dispatcher
from heraldbench.api.mlflow_ui import planned_ui
from heraldbench.api.openapi import customise_openapi
from heraldbench.api.planning import warm_up
from heraldbench.api.errors import install_error_handlers
from heraldbench.api.recovery import reconcile, reconcile_forever
from heraldbench.api.routes import api_router
from heraldbench.api.security import SecurityMiddleware

__all__ = ["create_app", "lifespan"]

logger = logging.getLogger("heraldbench.api")

#: web/ at the repository root (api/heraldbench/api/main.py -> ../../../web).
DEFAULT_WEB_DIR = Path(__file__).resolve().parents[3] / "web"


async def _connect_dask(settings: Settings) -> tuple[Any, Any]:
    """An asynchronous Dask client, and the LocalCluster it runs on when the service owns one.

    An unreachable scheduler is logged, not fatal: submissions are stored and wait, queued,
    until the reconciler reaches the scheduler.
    """
    from distributed import Client, LocalCluster

    if settings.dask_scheduler_address:
        try:
            client = await Client(
                settings.dask_scheduler_address,
                asynchronous=True,
                timeout=settings.dask_connect_timeout,
            )
            return client, None
        except (OSError, TimeoutError) as exc:
            logger.warning(
                "Dask scheduler %s unreachable: %s", settings.dask_scheduler_address, exc
            )
            return None, None
    cluster = await LocalCluster(
        n_workers=settings.local_workers,
        threads_per_worker=1,
        processes=settings.local_processes,
        dashboard_address=settings.dashboard_address,
        asynchronous=True,
        silence_logs=logging.ERROR,
    )
    client = await Client(cluster, asynchronous=True)
    return client, cluster


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Start the service's resources, recover, serve, and close everything on shutdown."""
    settings: Settings = app.state.settings
    mlflow_ui = app.state.mlflow_ui
    database = await run_in_threadpool(Database.open, settings.resolved_database_url)
    if database.broken is not None:  # serve, degraded: health and every request say why
        logger.error("%s", database.broken)
    client, cluster = await _connect_dask(settings)
    dispatcher = Dispatcher(client, settings)
    app.state.database, app.state.dispatcher = database, dispatcher
    await dispatcher.prepare_tracking()
    waiting = None
    if mlflow_ui is not None:
        mlflow_ui.start()  # after the store's migration: two migrations of one file race
        waiting = asyncio.create_task(mlflow_ui.wait_ready())
    if database.broken is None:
        await reconcile(database, dispatcher, grace_seconds=0)  # rows of earlier processes only
    reconnect = (lambda: _connect_dask(settings)) if settings.dask_scheduler_address else None
    warming = asyncio.create_task(asyncio.to_thread(warm_up, settings))  # first refusals fast
    dashboard = asyncio.create_task(dispatcher.watch_dashboard()) if cluster is not None else None
    background = asyncio.create_task(
        reconcile_forever(
            database,
            dispatcher,
            every=settings.reconcile_seconds,
            grace=settings.orphan_grace_seconds,
            reconnect=reconnect,
        )
    )
    try:
        yield
    finally:
        for task in (background, waiting, warming, dashboard):
            if task is not None:
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task
        if dispatcher.client is not None:
            await dispatcher.client.close()
        if cluster is not None:
            await cluster.close()
        database.dispose()
        if mlflow_ui is not None:
            await run_in_threadpool(mlflow_ui.stop)


def _route_id(route: APIRoute) -> str:
    return f"{route.tags[0]}-{route.name}" if route.tags else route.name


def _version() -> str:
    try:
        return metadata.version("heraldbench")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _mount_web(app: FastAPI, settings: Settings) -> None:
    """Serve web/ at / (after the API routes); a pointer to the API docs if it is missing."""
    folder = settings.web_dir or DEFAULT_WEB_DIR
    if (folder / "index.html").is_file():
        app.mount("/", StaticFiles(directory=folder, html=True), name="web")
        return

    @app.get("/", include_in_schema=False, response_class=HTMLResponse)
    def no_web_ui() -> str:
        return (
            "<!doctype html><title>heraldbench</title><p>The web UI is not installed "
            f"({folder}). The API is at <a href='/docs'>/docs</a>.</p>"
        )


class _Service(FastAPI):
    """The app with :class:`SecurityMiddleware` outside every layer FastAPI adds (its body-size
    limit and its handler of unexpected errors included), so that every response it sends,
    a 413 or a 500 too, passes through it."""

    def build_middleware_stack(self) -> Any:
        trusted = self.state.settings.trusted_hosts
        return SecurityMiddleware(super().build_middleware_stack(), trusted_hosts=trusted)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service, configured by ``settings`` (default: from the environment)."""
    settings = settings or get_settings()
    mlflow_ui = planned_ui(settings)
    if mlflow_ui is not None:  # every MLflow link the service gives points there
        settings = settings.model_copy(update={"mlflow_ui_url": mlflow_ui.url})
    app = _Service(
        title="heraldbench",
        version=_version(),
        summary="Benchmark embedding-cache schedulers: submit experiments, read results.",
        lifespan=lifespan,
        generate_unique_id_function=_route_id,
        max_body_size=settings.max_body_bytes,
    )
    app.state.settings, app.state.mlflow_ui = settings, mlflow_ui
    install_error_handlers(app)
    app.include_router(api_router)
    _mount_web(app, app.state.settings)  # last: / must not shadow /api
    customise_openapi(app, settings)  # typed spec bodies; bearer security only with a token
    return app
