"""The project data folder: where heraldbench keeps what it makes for a user between runs."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["HOME_ENV", "home"]

HOME_ENV = "HERALDBENCH_HOME"


def home() -> Path:
    """The project data folder (``$HERALDBENCH_HOME``, default ``./.heraldbench``), created."""
    folder = Path(os.environ.get(HOME_ENV) or ".heraldbench").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return folder
