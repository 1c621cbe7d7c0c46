"""``python -m heraldbench.api.mlflow_child ARGS``: ``mlflow server ARGS`` in a process that ends
with the service that started it (lifetime.py).

MLflow's launcher starts uvicorn as a child of its own and forwards SIGTERM to it; the app in
that child (mlflow_app.py) ends with the launcher in turn, so the whole tree goes when the service
goes, whatever ends it.
"""

from __future__ import annotations

import sys

from heraldbench.api.lifetime import die_with_parent


def main() -> None:
    die_with_parent()
    from mlflow.cli import cli

    cli(["server", *sys.argv[1:]], prog_name="mlflow")


if __name__ == "__main__":
    main()
