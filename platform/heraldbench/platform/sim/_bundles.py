"""Named argument bundles of the simulator's kernels.

The read kernel's 38 arrays and settings come as :class:`ReadSettings`, :class:`RowState`,
:class:`Evictor` and :class:`Touches`, built once per run. The simulator hands them to it as
plain tuples, which the kernel names again (``ReadSettings(*settings)``) and passes on, named,
to the helpers it calls: numba's dispatcher types a plain tuple of arrays with its compiled fast
path, as it does plain array arguments, but a named tuple in Python, array by array, on every
call (about 8 µs more for these bundles, once per iteration). Between kernels a named tuple
costs nothing.

The sync kernels (``_sync``) take the bundles below as named tuples: a dozen arrays in all,
twice per iteration. Every kernel unpacks its bundles into locals before its loops (an array read
from a tuple inside a loop would take a reference count per use).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = [
    "EvictionList",
    "Evictor",
    "HeldPushes",
    "PushLog",
    "ReadSettings",
    "RowState",
    "SyncRows",
    "SyncSettings",
    "TouchList",
    "Touches",
    "WriteList",
]


class ReadSettings(NamedTuple):
    """Scalars of every read of a run.

    Attributes:
        workers: W.
        capacity: K, rows per worker cache.
        policy: the eviction policy's code (``_state.POLICIES``).
        permanent_cap: LFUOpt's rows that are never evicted, per worker.
        bound: HET's staleness bound, or -1 for strict consistency.
        per_occurrence: HET's clock ticks per id occurrence (else per iteration).
        ascending: each worker's working set is touched in ascending row id
            (``contract.ReadRules``).
        evict_on_insert: each miss over capacity evicts at once (``contract.ReadRules``).
        lfu_on_insert: HET's released LFU and LFUOpt (``contract.ReadRules``).
    """

    workers: int
    capacity: int
    policy: int
    permanent_cap: int
    bound: int
    per_occurrence: bool
    ascending: bool
    evict_on_insert: bool
    lfu_on_insert: bool


class RowState(NamedTuple):
    """Per-row fields a read looks at (views into the row records, ``_state.row_records``)."""

    cached: np.ndarray
    valid: np.ndarray
    last_use: np.ndarray
    seen: np.ndarray
    ahead: np.ndarray
    lag: np.ndarray
    pending: np.ndarray
    tally: np.ndarray


class Evictor(NamedTuple):
    """Per-worker eviction structures: occupancy, the LRU log, LFU's counts and heap."""

    occupancy: np.ndarray
    log_ids: np.ndarray
    log_t: np.ndarray
    log_head: np.ndarray
    log_tail: np.ndarray
    use_count: np.ndarray
    permanent: np.ndarray
    heap_keys: np.ndarray
    heap_ids: np.ndarray
    heap_t: np.ndarray
    heap_size: np.ndarray
    touch_seq: np.ndarray


class Touches(NamedTuple):
    """One iteration's read records: touches, HET's held pushes, evictions."""

    touched_ids: np.ndarray
    touched_w: np.ndarray
    touched_kind: np.ndarray
    touched_occ: np.ndarray
    push_at: np.ndarray
    push_held: np.ndarray
    evicted_ids: np.ndarray
    evicted_w: np.ndarray
    evicted_pending: np.ndarray


class SyncSettings(NamedTuple):
    """Scalars of every sync of a run: W, ``SyncPolicy.direct``, strict consistency, and
    whether consistency is checked (``check_invariants``)."""

    workers: int
    direct: bool
    strict: bool
    check: bool


class SyncRows(NamedTuple):
    """Per-row fields the sync kernels read and write (views into the row records);
    ``writers`` and ``claims`` are scratch, zero between uses."""

    valid: np.ndarray
    dirty: np.ndarray
    partial: np.ndarray
    last_use: np.ndarray
    writers: np.ndarray
    claims: np.ndarray


class TouchList(NamedTuple):
    """An iteration's touch records: row, worker and ``TOUCH_*`` kind of the first ``n``."""

    ids: np.ndarray
    workers: np.ndarray
    kinds: np.ndarray
    n: int


class EvictionList(NamedTuple):
    """An iteration's eviction records: row, worker and unpushed updates of the first ``n``."""

    ids: np.ndarray
    workers: np.ndarray
    pending: np.ndarray
    n: int


class WriteList(NamedTuple):
    """Rows written in an iteration, and the workers that wrote each, of the first ``n``."""

    ids: np.ndarray
    masks: np.ndarray
    n: int


class HeldPushes(NamedTuple):
    """HET's pushes found by the reads: positions in the touch records and the updates each
    carried, of the first ``n``."""

    at: np.ndarray
    held: np.ndarray
    n: int


class PushLog(NamedTuple):
    """Copies sent, one entry per send (row, worker, ``Send`` kind); ``length[0]`` entries are
    filled. Empty arrays log nothing."""

    ids: np.ndarray
    workers: np.ndarray
    how: np.ndarray
    length: np.ndarray
