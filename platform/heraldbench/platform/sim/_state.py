"""The simulated cluster's state: per-row bitmasks, per-worker eviction structures, records.

Memory (R rows, W workers, K rows per cache): one record per row holding everything a lookup
reads or writes (:func:`row_records`), rounded up to whole 64-byte lines (64 bytes up to 8
workers, HET's per-copy clocks included under a bound below 127); LRU log 32·W·(K + m·F)
bytes; LFU's heap 32·W·(K + m·F) and counts 4·R·W. Criteo Kaggle, 8 workers, 10% caches,
LRU: 3.0 GB, HET included.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from heraldbench.platform.exceptions import CapacityError
from heraldbench.platform.schedulers import CacheView
from heraldbench.platform.sim import _eviction as ev
from heraldbench.platform.sim._bundles import (
    EvictionList,
    Evictor,
    HeldPushes,
    PushLog,
    RowState,
    SyncRows,
    Touches,
    TouchList,
    WriteList,
)

__all__ = [
    "POLICIES", "ClusterState", "IterationRecords", "absent_field", "mask_dtype", "row_record_dtype",
]

POLICIES = {"lru": ev.POLICY_LRU, "lfu": ev.POLICY_LFU, "lfuopt": ev.POLICY_LFUOPT}
_LINE = 64  # bytes in a CPU cache line


def mask_dtype(workers: int) -> type[np.unsignedinteger]:
    """Smallest unsigned integer with a bit per worker."""
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if workers <= np.iinfo(dtype).bits:
            return dtype
    raise CapacityError(f"at most 64 workers are supported, got {workers}")


@dataclass
class ClusterState:
    """Everything the reads, writes and syncs of an iteration read and mutate."""

    workers: int
    capacity: int
    policy: int
    cached: np.ndarray
    valid: np.ndarray
    dirty: np.ndarray
    partial: np.ndarray
    writers: np.ndarray
    last_use: np.ndarray
    seen: np.ndarray
    ahead: np.ndarray
    claims: np.ndarray
    tally: np.ndarray
    occupancy: np.ndarray
    log_ids: np.ndarray
    log_t: np.ndarray
    log_head: np.ndarray
    log_tail: np.ndarray
    use_count: np.ndarray
    permanent: np.ndarray
    permanent_cap: int
    lag: np.ndarray
    pending: np.ndarray
    heap_keys: np.ndarray
    heap_ids: np.ndarray
    heap_t: np.ndarray
    heap_size: np.ndarray
    touch_seq: np.ndarray

    @classmethod
    def empty(
        cls,
        rows: int,
        workers: int,
        capacity: int,
        working_set: int,
        policy: str,
        staleness_bound: int | None = None,
        window: bool = False,
    ) -> ClusterState:
        """Zeroed state; ``staleness_bound`` (HET's bound) adds per-copy clocks, ``window`` the
        replacement window's ``ahead`` (empty without one)."""
        held = min(capacity, rows)
        lru = policy == "lru"
        # The eviction structure holds live entries (<= K + one iteration's inserts) plus stale
        # ones. Compacting scans them all, a row lookup each, so its cost per touch is about
        # live / (slots - live): for the LRU log, four times the live entries rather than two
        # took a naive Kaggle epoch's lookups and log upkeep from 17.5 to 12.2 s (eight: 9.7 s).
        # The LFU heap keeps two: its entries are twice as large.
        slots = (4 if lru else 2) * (held + working_set) + 16
        het = staleness_bound is not None
        per_row = (rows, workers)
        clocks = clock_dtype(staleness_bound) if het else None
        record = row_records(rows, workers, clocks=clocks, window=window)
        return cls(
            workers=workers,
            capacity=capacity,
            policy=POLICIES[policy],
            cached=record["cached"],
            valid=record["valid"],
            dirty=record["dirty"],
            partial=record["partial"],
            writers=record["writers"],
            # 0 for a copy never read is safe: last_use is only compared with log entries of
            # cached copies and with iterations >= 0
            last_use=record["last_use"],
            seen=record["seen"],
            ahead=record["ahead"] if window else absent_field(rows, np.int32),
            claims=record["claims"],
            tally=record["tally"],
            occupancy=np.zeros(workers, np.int64),
            log_ids=np.zeros((workers, slots if lru else 1), np.int32),
            log_t=np.zeros((workers, slots if lru else 1), np.int32),
            log_head=np.zeros(workers, np.int64),
            log_tail=np.zeros(workers, np.int64),
            use_count=np.zeros((1, 1) if lru else per_row, np.int32),
            permanent=np.zeros(workers, np.int64),
            permanent_cap=max(0, capacity - working_set),
            lag=record["lag"] if het else absent_field(rows, np.int8, workers),
            pending=record["pending"] if het else absent_field(rows, np.int8, workers),
            heap_keys=np.zeros((workers, 1 if lru else slots), np.int64),
            heap_ids=np.zeros((workers, 1 if lru else slots), np.int32),
            heap_t=np.zeros((workers, 1 if lru else slots), np.int32),
            heap_size=np.zeros(workers, np.int64),
            touch_seq=np.zeros(workers, np.int64),
        )

    def read_rows(self) -> RowState:
        """The per-row fields the read kernel takes, bundled (build once per run: the arrays
        are never replaced)."""
        return RowState(*(getattr(self, name) for name in RowState._fields))

    def evictor(self) -> Evictor:
        """The per-worker eviction structures the read kernel takes, bundled."""
        return Evictor(*(getattr(self, name) for name in Evictor._fields))

    def sync_rows(self) -> SyncRows:
        """The per-row fields the sync kernels take, bundled."""
        return SyncRows(*(getattr(self, name) for name in SyncRows._fields))

    def view(self) -> CacheView:
        return CacheView(valid=self.valid, cached=self.cached, claims=self.claims,
                         tally=self.tally)

    def nbytes(self) -> int:
        """Bytes held, counting the per-row record array once."""
        arrays = [v for v in vars(self).values() if isinstance(v, np.ndarray)]
        bases = {id(a.base): a.base for a in arrays if isinstance(a.base, np.ndarray)}
        return sum(a.nbytes for a in arrays if a.base is None) + sum(
            b.nbytes for b in bases.values()
        )


def absent_field(rows: int, dtype: type[np.generic], workers: int | None = None) -> np.ndarray:
    """A per-row field the run does not keep (HET's clocks without a staleness bound, ``ahead``
    without a replacement window): a zero-stride view of one zero, holding no memory, that the
    kernels recognise (``_eviction.kept``) and never read.

    It has the numba type of the field it stands for (a strided view of the row records, of
    HET's default clock type: see :func:`clock_dtype`), so that runs with and without the
    field share one compiled read kernel, where an empty array (a different type: contiguous)
    made a fresh checkout compile it once per kind of run, tens of seconds each."""
    shape = (rows,) if workers is None else (rows, workers)
    zero = np.zeros(1, dtype)
    return np.lib.stride_tricks.as_strided(zero, shape=shape, strides=(0,) * len(shape))


def clock_dtype(bound: int) -> type[np.signedinteger]:
    """Smallest signed integer for HET's per-copy clocks under ``bound``: a copy's lead saturates
    at the type's maximum, which must still exceed the bound, and its held updates never do."""
    for dtype in (np.int8, np.int16, np.int32):
        if bound < np.iinfo(dtype).max:
            return dtype
    raise CapacityError(f"a staleness bound must be below 2**31 - 1, got {bound}")


def row_records(
    rows: int, workers: int, clocks: type[np.signedinteger] | None = None, window: bool = False
) -> np.ndarray:
    """The per-row state of every kernel, one record per row, records aligned to cache lines.

    A lookup reads and writes a row's cached, valid, writers, dirty and partial bits, its
    ``seen`` marker and its worker's ``last_use``; ``claims`` and ``tally`` are scratch, zero
    between uses, for partitions and HET's occurrence counts. Kept side by side they cost one
    cache line per lookup instead of one per array, which at Criteo scale (tens of millions of
    rows, most far from any CPU cache) is what sets the simulator's speed: up to 8 workers they
    fit one 64-byte line. ``window`` adds ``ahead`` (the last batch of a replacement window to
    read the row); ``clocks`` (a dtype: :func:`clock_dtype`) adds HET's per-copy ``lag`` behind
    the PS clock and unpushed updates (``pending``), which still fit the line for 8 workers
    and a bound below 127 (HET's default is 100), else take it to an aligned pair of lines. The
    kernels see each field as a strided array view. Zero-filled, as every field starts.
    """
    dtype = row_record_dtype(workers, clocks, window)
    size = dtype.itemsize
    align = 2 * _LINE if size % (2 * _LINE) == 0 else _LINE  # pairs of lines stay pairs
    raw = np.zeros(rows * size + align, np.uint8)
    start = -raw.ctypes.data % align
    return raw[start : start + rows * size].view(dtype)


@functools.lru_cache(maxsize=64)
def row_record_dtype(
    workers: int, clocks: type[np.signedinteger] | None = None, window: bool = False
) -> np.dtype:
    """The record of :func:`row_records`, padded to whole cache lines."""
    mdt = mask_dtype(workers)
    fields = [
        ("cached", mdt), ("valid", mdt), ("dirty", mdt), ("writers", mdt), ("partial", np.bool_),
        ("claims", mdt),
    ]  # fmt: skip
    if clocks is not None:  # small fields first, so that alignment wastes no bytes
        fields += [("lag", clocks, (workers,)), ("pending", clocks, (workers,))]
    fields += [("seen", np.int32), ("last_use", np.int32, (workers,)), ("tally", np.int32)]
    if window:
        fields += [("ahead", np.int32)]
    packed = np.dtype(fields, align=True)
    return np.dtype({
        "names": packed.names,
        "formats": [packed.fields[name][0] for name in packed.names],
        "offsets": [packed.fields[name][1] for name in packed.names],
        "itemsize": -(-packed.itemsize // _LINE) * _LINE,
    })  # fmt: skip


@dataclass
class IterationRecords:
    """What one iteration touched, evicted and wrote; kept for the sync pass's look-ahead."""

    touched_ids: np.ndarray
    touched_w: np.ndarray
    touched_kind: np.ndarray
    touched_occ: np.ndarray
    push_at: np.ndarray  # HET: positions in the touch records of the copies pushed
    push_held: np.ndarray  # HET: the updates each of them carried
    evicted_ids: np.ndarray
    evicted_w: np.ndarray
    evicted_pending: np.ndarray
    write_ids: np.ndarray
    write_masks: np.ndarray
    sent_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    sent_w: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    sent_how: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    sent_n: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    n_touched: int = 0
    n_evicted: int = 0
    n_written: int = 0
    n_pushed: int = 0

    def touches(self) -> Touches:
        """The records the read kernel fills, bundled (the arrays are never replaced)."""
        return Touches(*(getattr(self, name) for name in Touches._fields))

    def touch_list(self) -> TouchList:
        return TouchList(self.touched_ids, self.touched_w, self.touched_kind, self.n_touched)

    def eviction_list(self) -> EvictionList:
        return EvictionList(self.evicted_ids, self.evicted_w, self.evicted_pending, self.n_evicted)

    def write_list(self, n: int | None = None) -> WriteList:
        """The rows written, or the first ``n`` of them."""
        return WriteList(self.write_ids, self.write_masks, self.n_written if n is None else n)

    def held_pushes(self) -> HeldPushes:
        return HeldPushes(self.push_at, self.push_held, self.n_pushed)

    def push_log(self) -> PushLog:
        return PushLog(self.sent_ids, self.sent_w, self.sent_how, self.sent_n)

    def clear(self) -> None:
        self.n_touched = self.n_evicted = self.n_written = self.n_pushed = 0

    @classmethod
    def empty(cls, size: int, workers: int, log_sent: bool = False) -> IterationRecords:
        """Records for iterations of at most ``size`` touches; ``log_sent`` also keeps the list
        of copies sent to the PS or another worker: evictions, plus at most one per worker of
        each row written now or at the far end of the sync window."""
        sent = (2 * workers + 1) * size if log_sent else 0
        return cls(
            sent_ids=np.zeros(sent, np.int32),
            sent_w=np.zeros(sent, np.int8),
            sent_how=np.zeros(sent, np.int8),
            touched_ids=np.zeros(size, np.int32),
            touched_w=np.zeros(size, np.int8),
            touched_kind=np.zeros(size, np.int8),
            touched_occ=np.zeros(size, np.int32),
            push_at=np.zeros(size, np.int32),
            push_held=np.zeros(size, np.int32),
            evicted_ids=np.zeros(size, np.int32),
            evicted_w=np.zeros(size, np.int8),
            evicted_pending=np.zeros(size, np.int32),
            write_ids=np.zeros(size, np.int32),
            write_masks=np.zeros(size, mask_dtype(workers)),
        )
