"""From a submitted document to the runs of an experiment, with the checks the service adds.

The pipelines' :func:`~heraldbench.pipelines.grid.expand` validates every point of a (grid) spec;
on top of it the service confines dataset paths (and workload-profile paths) to the configured data
folders (so a spec cannot make a worker read ``/etc/passwd``), loads each profile once to refuse a
bad one at submission, and refuses ``mode: train`` where no trainer is installed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from heraldbench.api.core.config import Settings
from heraldbench.api.errors import SpecFieldError
from heraldbench.pipelines.grid import Grid, check_runs, expand
from heraldbench.platform.data.workload import BUILTIN_PROFILES, resolve_profile
from heraldbench.platform.exceptions import ProfileError

__all__ = ["confine_path", "is_file", "normalised_spec", "plan_experiment", "trainer_available"]


def trainer_available() -> bool:
    """Whether the trainer is installed (checked without importing torch)."""
    try:
        return importlib.util.find_spec("heraldbench.platform.train") is not None
    except (ImportError, ValueError):
        return False


def confine_path(path: str | Path, settings: Settings, field: str) -> Path:
    """``path`` resolved (symlinks followed) if it lies under an allowed folder.

    A relative path is read as a shell would, from the service's working directory
    (``data/criteo/train.txt`` with the default data folder ``./data``), and else relative to the
    first data folder (``criteo/train.txt``); an existing candidate wins.

    Raises:
        SpecFieldError: the path lies outside every data folder (the message names the paths
            tried).
    """
    roots = settings.allowed_roots
    try:
        given = Path(path).expanduser()
        bases = [Path.cwd(), roots[0]] if not given.is_absolute() else [Path("/")]
        candidates = list(dict.fromkeys((base / given).resolve() for base in bases))
    except (OSError, ValueError, RuntimeError) as exc:  # too long, a NUL byte, a symlink loop
        raise SpecFieldError(
            [{"field": field, "value": str(path), "message": f"not a usable path ({exc})"}]
        ) from None
    allowed = [c for c in candidates if any(c.is_relative_to(root) for root in roots)]
    existing = [c for c in allowed if _exists(c)]
    if existing or allowed:
        return (existing or allowed)[0]
    folders = ", ".join(str(r) for r in roots)
    tried = " or ".join(str(c) for c in candidates)
    raise SpecFieldError(
        [
            {
                "field": field,
                "value": str(path),
                "message": f"{tried} does not lie under a data folder (HERALDBENCH_DATA_DIRS): "
                f"{folders}",
            }
        ]
    )


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def is_file(path: Path) -> bool:
    """Whether ``path`` is a readable file (False for names the OS refuses)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def plan_experiment(document: Any, settings: Settings) -> Grid:
    """Expand and check a submitted (grid) spec; nothing is written.

    Dataset paths in the returned runs are the confined, absolute ones.

    Raises:
        SpecError: the spec, a point of it, or a dataset path is invalid (422).
    """
    grid = expand(document)
    confined: dict[str, Path] = {}
    for index, run in enumerate(grid.runs):
        field, path = _dataset_file(run.spec.dataset)
        if path is None:
            continue
        key = str(path)
        if key not in confined:
            confined[key] = confine_path(path, settings, f"dataset.{field}")
            if field == "profile":
                _check_profile(confined[key])
        value = str(confined[key]) if field == "profile" else confined[key]
        grid.runs[index] = _with_dataset(run, run.spec.dataset.model_copy(update={field: value}))
    check_runs(grid)  # after confinement: only files under the data folders are looked at
    if grid.runs and grid.runs[0].spec.mode == "train" and not trainer_available():
        raise SpecFieldError(
            [
                {
                    "field": "mode",
                    "value": "train",
                    "message": "training needs heraldbench.platform.train, which this "
                    "installation lacks; use mode: simulate",
                }
            ]
        )
    return grid


def _dataset_file(dataset: Any) -> tuple[str, Any]:
    """The dataset's file field and value: a raw or prepared path, or a profile that is not a
    built-in name; (name, None) when it reads no file of the user's."""
    if getattr(dataset, "kind", None) == "synthetic":
        profile = dataset.profile
        return "profile", None if profile in BUILTIN_PROFILES else profile
    return "path", getattr(dataset, "path", None)


def _check_profile(path: Path) -> None:
    try:
        resolve_profile(str(path))
    except ProfileError as exc:
        raise SpecFieldError(
            [{"field": "dataset.profile", "value": str(path), "message": exc.reason
              + (f" (field {exc.field})" if exc.field else "")}]  # fmt: skip
        ) from None


def _with_dataset(run: Any, dataset: Any) -> Any:
    from dataclasses import replace

    return replace(run, spec=run.spec.model_copy(update={"dataset": dataset}))


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
