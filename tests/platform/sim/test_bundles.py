"""The read kernel's parameters are the fields of its argument bundles, in order.

The simulator unpacks the bundles into the call (``*bundle``, _bundles' docstring says why), so
a field added, dropped or moved in a bundle but not in the kernel would shift every argument
after it; this pins the two orders together without compiling anything.
"""

from __future__ import annotations

import inspect

from heraldbench.platform.sim import _kernels
from heraldbench.platform.sim._bundles import Evictor, ReadSettings, RowState, Touches


def test_read_kernel_takes_the_bundles_fields_in_order() -> None:
    params = list(inspect.signature(_kernels.read_batch.py_func).parameters)
    bundled = [*ReadSettings._fields, *RowState._fields, *Evictor._fields, *Touches._fields]
    assert params == ["ids", "assign", "iteration", *bundled, "counts"]
