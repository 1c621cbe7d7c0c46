"""``heraldbench serve``, added to the one ``heraldbench`` command line.

Importing the pipelines' command line registers every other command (``simulate``, ``run``,
``preprocess``, ...) on the platform's typer app; this module adds ``serve`` and is the console
entry point.
"""

from __future__ import annotations

from typing import Annotated

import typer

from heraldbench.pipelines.cli import app

__all__ = ["app", "main"]


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8000,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
) -> None:
    """Serve the REST API and the web UI (settings from the environment; see docs/api.md).

    Embedded defaults: a SQLite app database and MLflow store under $HERALDBENCH_HOME
    (./.heraldbench) and a Dask LocalCluster; set HERALDBENCH_DATABASE_URL,
    DASK_SCHEDULER_ADDRESS, MLFLOW_TRACKING_URI to use running services instead.
    """
    import uvicorn

    # One process: the service reconciles its database and may own a LocalCluster.
    uvicorn.run(
        "heraldbench.api.main:create_app",
        factory=True,
        host=host,
        port=port,
        log_level=log_level,
        workers=1,
    )


def main() -> None:
    app()


if __name__ == "__main__":
    main()
