"""Child processes that end with the process that started them, however it ends.

A service killed with SIGKILL runs no clean-up, so its children must notice on their own. On
Linux, :func:`die_with_parent` asks the kernel to send the calling process SIGTERM when its parent
exits (``prctl(PR_SET_PDEATHSIG)``); a parent already gone by then (the window between fork
and the call) is caught by checking who the parent is afterwards. Dask's worker processes need
nothing of this: they watch a pipe to their nanny and exit when it closes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

__all__ = ["PARENT_ENV", "die_with_parent"]

#: The pid a child expects as its parent (set by the parent when it starts the child).
PARENT_ENV = "HERALDBENCH_PARENT_PID"
_PR_SET_PDEATHSIG = 1


def die_with_parent(expected_parent: int | None = None) -> bool:
    """Have SIGTERM sent to this process when its parent exits; exit now if it already has.

    Args:
        expected_parent: the parent's pid, when known (default: ``$HERALDBENCH_PARENT_PID`` if
            it names this process's parent, else the parent as it is now).

    Returns:
        Whether the kernel took the request (False where ``prctl`` does not exist).
    """
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        return False
    parent = os.getppid()
    if expected_parent is None:
        named = os.environ.get(PARENT_ENV, "")
        expected_parent = int(named) if named.isdigit() and int(named) == parent else parent
    if parent != expected_parent or parent == 1:
        os._exit(0)  # the parent ended before the request was in place
    return True
