"""Schedulers from other installed packages, declared under the entry-point group
``heraldbench.schedulers`` (docs/extending.md).

An entry point names a module (whose ``@register`` classes register on import) or a
:class:`Scheduler` subclass (registered here if it is not yet)::

    [project.entry-points."heraldbench.schedulers"]
    round-robin = "my_package.round_robin:RoundRobin"

Discovery runs once, when :mod:`heraldbench.platform.schedulers` is first imported (every
command, the service and the pipelines import it before they validate a spec). A plugin whose
import fails, or that names something other than a scheduler, is recorded by its entry-point
name with the reason (:func:`plugin_errors`) and warned about; the built-ins and every other
plugin stay available.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import warnings

from heraldbench.platform.schedulers._base import Scheduler, register, registered

__all__ = ["ENTRY_POINT_GROUP", "discover_plugins", "plugin_errors"]

ENTRY_POINT_GROUP = "heraldbench.schedulers"

_ERRORS: dict[str, str] = {}
_LOADED: set[str] = set()


def discover_plugins() -> dict[str, str]:
    """Load every entry point of the group not loaded yet; returns the failures found now,
    as ``{entry-point name: reason}`` (also kept for :func:`plugin_errors`)."""
    failed: dict[str, str] = {}
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        key = f"{entry.name}={entry.value}"
        if key in _LOADED:
            continue
        _LOADED.add(key)
        try:
            _load(entry)
        except Exception as exc:  # noqa: BLE001 - any failure of foreign code is reported
            failed[entry.name] = f"{type(exc).__name__}: {exc}"
    for name, reason in failed.items():
        warnings.warn(f"scheduler plugin {name!r} was not loaded: {reason}", stacklevel=2)
    _ERRORS.update(failed)
    return failed


def plugin_errors() -> dict[str, str]:
    """Plugins that failed to load, by entry-point name, with the reason."""
    return dict(_ERRORS)


def _load(entry: importlib.metadata.EntryPoint) -> None:
    target = entry.load()
    if inspect.ismodule(target):
        return  # its @register decorators ran on import
    if not (inspect.isclass(target) and issubclass(target, Scheduler)):
        raise TypeError(f"{entry.value} is not a module or a Scheduler subclass, got {target!r}")
    if registered().get(getattr(target, "kind", None)) is not target:  # type: ignore[arg-type]
        register(target)
