"""How a worker's read of a row is classified: a hit, a miss pull or an update pull.

Shared by the simulator's read kernels (:mod:`._kernels`, :mod:`._released`).
"""

from __future__ import annotations

import numba
import numpy as np

from heraldbench.platform.contract import Read

__all__ = ["TOUCH_HIT", "TOUCH_MISS", "TOUCH_UPDATE", "classify_het", "classify_strict"]

# The contract's read kinds as plain ints for numba; also the index of each in the counts array.
TOUCH_HIT, TOUCH_MISS, TOUCH_UPDATE = int(Read.HIT), int(Read.MISS), int(Read.UPDATE)


# The classifications are arithmetic, without branches: a mispredicted branch would hold up the
# lookups behind it, and an inlined helper that branches on arrays costs atomic reference counts.
@numba.njit(cache=True, nogil=True, inline="always")
def classify_strict(k, w, cached, valid):  # pragma: no cover - numba
    """Hit, miss pull or update pull of row k at worker w under strict consistency (stale when
    the copy's valid bit is clear); the row is now cached there."""
    bit = cached.dtype.type(1 << w)
    mask = cached[k]
    cached[k] = mask | bit
    held = np.int8((mask & bit) != 0)
    fresh = np.int8((valid[k] & bit) != 0)
    # miss (not held) 1, hit (held, fresh) 0, update pull (held, outdated) 2
    return np.int8(1) - held + np.int8(2) * held * (np.int8(1) - fresh)


@numba.njit(cache=True, nogil=True, inline="always")
def classify_het(k, w, bound, cached, lag, pending):  # pragma: no cover - numba
    """The same under HET's bounded staleness: stale when the PS clock leads the copy's by more
    than ``bound``. A pull refreshes the copy's clock; a miss starts it with no local updates,
    while an update pull keeps them (HET)."""
    bit = cached.dtype.type(1 << w)
    mask = cached[k]
    cached[k] = mask | bit
    held = np.int8((mask & bit) != 0)
    lead = lag[k, w]
    stale = np.int8(lead > bound)
    lag[k, w] = lead * (held * (np.int8(1) - stale))
    pending[k, w] = pending[k, w] * held
    return np.int8(1) - held + np.int8(2) * held * stale
