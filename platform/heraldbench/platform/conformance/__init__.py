"""Conformance: each seed system's released code, run beside heraldbench on the same trace.

The authors' code is never part of heraldbench: the user names a checkout of it, one system
module per system builds or imports it from there (built once into the project data folder),
drives it with a shim of our own, runs heraldbench's scheduler on the same trace, and returns a
:class:`SystemReport`. Every system module exposes exactly::

    check_reference(path: Path) -> str | None
        # raises ConformanceError when ``path`` is not that system's checkout (naming the path
        # and the file it expected); returns the checkout's git commit (None without git)
    compare(reference: Path, spec: ExperimentSpec, trace: TraceSource, *, variant: str,
            cache_dir: Path) -> SystemReport

``trace`` is the trace heraldbench's runner replays for ``spec`` (``spec.dataset.open()``).

>>> sorted(SYSTEMS)
['bagpipe', 'fae', 'herald', 'het']
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from heraldbench.platform.conformance._report import ConformanceError, Difference, SystemReport
from heraldbench.platform.home import home

__all__ = [
    "SYSTEMS",
    "VARIANTS",
    "ConformanceError",
    "Difference",
    "SystemReport",
    "cache_root",
    "system_module",
]

#: System name -> the module that checks it, imported only when that system is asked for.
SYSTEMS: dict[str, str] = {
    name: f"heraldbench.platform.conformance.{name}" for name in ("herald", "het", "fae", "bagpipe")
}
#: The heraldbench variants a released implementation can be compared with.
VARIANTS = ("released", "normative")


def system_module(system: str) -> ModuleType:
    """The module of ``system`` (``check_reference`` and ``compare``)."""
    if system not in SYSTEMS:
        raise ConformanceError(
            f"unknown system {system!r}; conformance checks exist for {', '.join(SYSTEMS)}"
        )
    name = SYSTEMS[system]
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise ConformanceError(
            f"the conformance check of {system!r} is not installed (no module {name})"
        ) from None
    for attribute in ("check_reference", "compare"):
        if not callable(getattr(module, attribute, None)):
            raise ConformanceError(f"{name} has no {attribute}(): not a conformance check")
    return module


def cache_root() -> Path:
    """Where released code is built: ``$HERALDBENCH_HOME/conformance`` (created)."""
    root = home() / "conformance"
    root.mkdir(parents=True, exist_ok=True)
    return root
