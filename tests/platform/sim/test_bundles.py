"""The kernels' arguments come in named bundles.

The simulator unpacks the read kernel's bundles into the call (``*bundle``, _bundles' docstring
says why), so a field added, dropped or moved in a bundle but not in the kernel would shift every
argument after it; this pins the two orders together without compiling anything. The other
kernels take bundles as tuples, and none takes more than fifteen arguments.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from numba.core.dispatcher import Dispatcher

from heraldbench.platform import sim
from heraldbench.platform.sim import _kernels
from heraldbench.platform.sim._bundles import Evictor, ReadSettings, RowState, Touches


def test_read_kernel_takes_the_bundles_fields_in_order() -> None:
    params = list(inspect.signature(_kernels.read_batch.py_func).parameters)
    bundled = [*ReadSettings._fields, *RowState._fields, *Evictor._fields, *Touches._fields]
    assert params == ["ids", "assign", "iteration", *bundled, "counts"]


#: Kernels of the read path that still take their arrays one by one: the read kernel (whose
#: bundles the simulator unpacks into the call) and the helpers it hands them to. The test below
#: fails once one of them is bundled, so that it leaves this list.
_READ_PATH_UNBUNDLED = {
    "read_batch", "_touch_lru", "_touch_lfu", "touch_lru_evicting", "touch_lfu_on_insert",
    "evict_lru", "evict_lfu",
}  # fmt: skip
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
    assert {"sync_iteration", "write_and_sync", "bounded_staleness_sync"} <= set(kernels)
    too_long = {name for name, count in kernels.items() if count > _MOST_PARAMETERS}
    assert too_long == _READ_PATH_UNBUNDLED
