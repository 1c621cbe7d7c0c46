"""From a submitted document to what the service stores and runs, through the one admission
every way in shares (:mod:`heraldbench.pipelines.admission`).

The service admits with its own :class:`~heraldbench.pipelines.admission.Admission`: every file a
spec names is confined to the data folders (``HERALDBENCH_DATA_DIRS``; paths.py), and each run
must fit the memory of a worker (``HERALDBENCH_RUN_MEMORY``, else the smallest Dask worker's
limit, else this machine's). On top, ``mode: train`` is refused where no trainer is installed.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

from heraldbench.api.core.config import Settings
from heraldbench.pipelines.admission import Admission, admit_grid, admit_study
from heraldbench.pipelines.grid import Grid
from heraldbench.platform.exceptions import SpecFieldError
from heraldbench.platform.paths import PathPolicy

__all__ = [
    "admission", "confine_file", "normalised_spec", "plan_experiment", "plan_study",
    "trainer_available", "warm_up",
]


def trainer_available() -> bool:
    """Whether the trainer is installed (checked without importing torch)."""
    try:
        return importlib.util.find_spec("heraldbench.platform.train") is not None
    except (ImportError, ValueError):
        return False


def admission(settings: Settings, memory: int | None = None) -> Admission:
    """The service's admission: its data folders, and ``memory`` bytes a run may use."""
    return Admission(PathPolicy.of(settings.allowed_roots), settings.run_memory or memory)


def confine_file(path: str, settings: Settings, field: str) -> Path:
    """A raw file a request names (a dataset registration), confined as a spec's files are."""
    return admission(settings).paths.confine(path, field)  # type: ignore[union-attr]


def plan_experiment(document: Any, settings: Settings, memory: int | None = None) -> Grid:
    """Admit a submitted (grid) spec; nothing is written. Its runs name confined paths.

    Raises:
        SpecError: the spec, a point of it, a file it names or what it needs is refused (422).
    """
    grid = admit_grid(document, admission(settings, memory))
    if grid.runs and grid.runs[0].spec.mode == "train":
        _require_trainer()
    return grid


def plan_study(
    document: Any, settings: Settings, memory: int | None = None
) -> tuple[Any, dict[str, Any]]:
    """Admit a study's spec: returns it and the document to store, with confined paths."""
    spec, stored = admit_study(document, admission(settings, memory))
    if spec.mode == "train":
        _require_trainer()
    return spec, stored


def _require_trainer() -> None:
    if not trainer_available():
        raise SpecFieldError(
            [{"field": "mode", "value": "train", "message": "training needs "
              "heraldbench.platform.train, which this installation lacks; use mode: simulate"}]
        )  # fmt: skip


#: A spec whose admission loads what every admission needs: the built-in workload profile (a
#: third of a second to parse), the simulator's modules, the tuning pipeline.
_WARM_UP = {
    "name": "warm-up", "dataset": {"kind": "synthetic", "profile": "criteo-kaggle",
                                   "samples": 1000, "scale": 0.001},
    "cluster": {"workers": 2, "batch_size": 16}, "schedulers": [{"kind": "naive"}],
}  # fmt: skip


def warm_up(settings: Settings) -> None:
    """Load what admission needs, so that no refusal pays for a first load (the service runs it
    as it starts)."""
    plan_experiment(_WARM_UP, settings)
    if importlib.util.find_spec("heraldbench.pipelines.tune") is not None:
        importlib.import_module("heraldbench.pipelines.tune")


def normalised_spec(grid: Grid) -> dict[str, Any]:
    """The first point and seed of ``grid`` with every default filled in.

    Its schedulers are the listed ones (scheduler grids multiplied out), without the naive
    baseline the service adds when a spec lacks it.
    """
    first = grid.runs[0]
    listed = [
        r.spec.schedulers[0] for r in grid.runs if r.group == first.group and not r.baseline_added
    ]
    spec = first.spec.model_copy(update={"schedulers": listed or [first.spec.schedulers[0]]})
    return spec.model_dump(mode="json")
