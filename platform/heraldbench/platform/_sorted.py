"""Membership in a sorted key array, for the small sorted sets executors keep (parked rows,
parked copies, a replicated table)."""

from __future__ import annotations

import numpy as np

__all__ = ["find_sorted"]


def find_sorted(keys: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Position in ``keys`` (ascending) of each of ``wanted``, and whether it is there (where it
    is not, the position is meaningless)."""
    wanted = np.asarray(wanted)
    if not keys.size:
        return np.zeros(wanted.shape, np.int64), np.zeros(wanted.shape, bool)
    at = np.searchsorted(keys, wanted).clip(0, keys.size - 1)
    return at, keys[at] == wanted
