"""The kernels' arguments come in named bundles (``_bundles``): none takes more than fifteen.

Each bundle is built from its fields' names and named again in the kernel from the same class,
so their order cannot drift apart; the differential tests hold what the kernels then count."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from numba.core.dispatcher import Dispatcher

from heraldbench.platform import sim

_MOST_PARAMETERS = 15


def _kernels_of_the_simulator() -> dict[str, int]:
    """Every numba kernel defined in the simulator's modules, with its parameter count."""
    found = {}
    for info in pkgutil.iter_modules(sim.__path__):
        module = importlib.import_module(f"{sim.__name__}.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == module.__name__:
                found[name] = len(inspect.signature(value.py_func).parameters)
    return found


def test_no_kernel_takes_more_than_fifteen_arguments() -> None:
    kernels = _kernels_of_the_simulator()
    assert {"read_lru", "sync_iteration", "write_and_sync", "bounded_staleness_sync"} <= set(
        kernels
    )
    assert {name: count for name, count in kernels.items() if count > _MOST_PARAMETERS} == {}
