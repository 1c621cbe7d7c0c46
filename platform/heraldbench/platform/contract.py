"""The decision stream: the contract between schedulers and executors (docs/architecture.md).

A scheduler decides and an executor carries out; this module is everything that passes between
them, and nothing here counts or moves data.

* Once per run the scheduler returns a :class:`RunPlan`: the trace it runs on and what it needs
  from every executor (a cache policy of its own, a replacement window, rows replicated on every
  worker, a logically replicated cache run by an oracle).
* Once per iteration it returns a :class:`Plan`: the partition of the global batch and whether
  the batch is served by the replicated rows.
* The state machine (:func:`heraldbench.platform.sim.decisions`) turns plans into one
  :class:`IterationDecisions` per iteration: every read with its kind, every eviction, every
  copy sent, prefetches, phase switches, all-reduced rows, version checks. The simulator counts
  them, the trainer moves the rows they name.

Units: a *row* is one embedding row of ``embedding_dim`` values; ids are global row ids of the
trace the stream was produced on; a *worker* is an index in ``[0, W)``; counts are rows moved
(row-transfers), before any ring factor unless said otherwise.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from heraldbench.platform._sorted import find_sorted
from heraldbench.platform.data import SampleChunk, TraceSource
from heraldbench.platform.exceptions import InvariantViolation, SpecError
from heraldbench.platform.metrics import ring_allreduce

__all__ = [
    "POLICY_NAMES",
    "CacheView",
    "IterationDecisions",
    "OracleWindow",
    "PhaseSwitch",
    "Plan",
    "Read",
    "ReadRules",
    "RunPlan",
    "Send",
    "Series",
    "SingleWriters",
    "record_keys",
]

#: Cache replacement policies an executor knows, by name.
POLICY_NAMES = ("lru", "lfu", "lfuopt")
#: Co-writer rules an executor knows (docs/semantics.md, "Writes").
CONSISTENCY_NAMES = ("strict", "optimistic")


class Read(enum.IntEnum):
    """The kind of one worker's read of one row (docs/semantics.md, "One iteration b")."""

    HIT = 0  # a valid copy (or, under HET, one within its staleness bound)
    MISS = 1  # absent: a miss pull from the PS
    UPDATE = 2  # present but outdated: an update pull
    PREFETCH = 3  # loaded before anyone reads it (BagPipe); a miss pull, counted when issued


class Send(enum.IntEnum):
    """How a dirty copy left its worker (docs/semantics.md, "One iteration b")."""

    EVICT = 0  # written back as it was evicted, before the iteration's reads: an evict push
    UPDATE = 1  # pushed after the update because another worker reads the row: an update push
    DIRECT = 2  # parked for the row's next readers after the update, with its pending delta:
    #            handed over at their reads (:class:`IterationDecisions`, ``handed_*``); no push
    RELEASE = 3  # a transient row written back right after the update: an evict push


class Series(enum.IntEnum):
    """Columns of the per-iteration series every executor records (rows, or row-transfers per
    worker for ``ALLREDUCE``, or messages for ``METADATA``)."""

    HITS = 0
    MISS_PULL = 1
    UPDATE_PULL = 2
    EVICT_PUSH = 3
    UPDATE_PUSH = 4
    ALLREDUCE = 5
    METADATA = 6

    @property
    def key(self) -> str:
        """The column's name in results and counters: ``miss_pull``."""
        return self.name.lower()


@dataclass(frozen=True)
class CacheView:
    """What a scheduler may look at when it decides: the state at the end of the last iteration.

    Attributes:
        valid: (R,) per global row, a bitmask of the workers holding a valid copy (bit w).
        cached: (R,) per global row, a bitmask of the workers holding any copy.
        claims, tally: (R,) per global row, scratch a partition may use (a worker bitmask of
            ``valid``'s dtype and an int32), zero on entry and to be left zero on return. The
            simulator keeps them next to each row's state, so marking the rows of a batch costs
            no extra memory traffic; None where no such scratch is offered.
        counted_ids: the batch's ids with every pad of a ragged table set to -1
            (``data.ragged.marked_pads``), for a rule that counts an id each time a sample reads
            it; None when the batch has no pads (then the batch's ids are the ones counted).
    """

    valid: np.ndarray
    cached: np.ndarray
    claims: np.ndarray | None = None
    tally: np.ndarray | None = None
    counted_ids: np.ndarray | None = None

    def counted(self, ids: np.ndarray) -> np.ndarray:
        """The ids of the batch ``ids`` that a counting rule counts (:attr:`counted_ids`)."""
        return ids if self.counted_ids is None else self.counted_ids


@dataclass(frozen=True)
class Plan:
    """A scheduler's decisions for one iteration.

    Attributes:
        assign: (W·m,) worker of each sample; every worker gets exactly m samples.
        replicated: the batch is served entirely by the rows replicated on every worker
            (:attr:`RunPlan.replicated_rows`, FAE's hot batches); it touches no cache.
        allreduce_rows: rows all-reduced after this iteration, before the ring factor.
    """

    assign: np.ndarray
    replicated: bool = False
    allreduce_rows: int = 0


@dataclass(frozen=True)
class OracleWindow:
    """A logically replicated cache run by an oracle that sees batches ahead (BagPipe).

    Attributes:
        lookahead: L, the batches ``[b, b+L)`` known when batch b runs (the current one included).
        cleanup_interval: iterations between cleanup points (evict expired leases, prefetch).
        bounded: the cache holds at most K rows (the executor's ``cache_rows``); False: the
            oracle admits every row it leases, whatever K is (BagPipe's released oracle stores
            its cache size and never reads it).
        runs_tail: every batch of the trace runs; False: the last L batches only fill the
            window and never run (BagPipe's released oracle stops when its loader runs dry,
            with L batches still queued).
    """

    lookahead: int
    cleanup_interval: int
    bounded: bool = True
    runs_tail: bool = True

    def __post_init__(self) -> None:
        if self.lookahead < 1:
            raise SpecError(f"oracle lookahead must be >= 1 batch, got {self.lookahead}")
        if self.cleanup_interval < 1:
            raise SpecError(f"cleanup interval must be >= 1 iteration, got {self.cleanup_interval}")
        if self.cleanup_interval > self.lookahead:
            # a row no batch of the window reuses must leave before a batch beyond it reads it:
            # its one writer's replica alone is current (a no-sync row, SingleWriters)
            raise SpecError(f"cleanup interval {self.cleanup_interval} exceeds the lookahead "
                            f"{self.lookahead}")


@dataclass(frozen=True)
class ReadRules:
    """How each worker's cache takes its reads. The defaults are docs/semantics.md's; each other
    setting reproduces a choice of a released implementation (its ``released`` variant;
    docs/conformance.md says where in the released code each one is).

    Attributes:
        ascending: the touch order is ascending row id (the released code reads a worker's
            keys from an ordered set), not first occurrence. Row numbers then matter, so the
            simulator does not renumber the trace's rows.
        evict_on_insert: each miss that takes a worker's cache over K rows evicts the least
            recently used row at once, in touch order, even a row the worker reads later in
            the same iteration (Herald's ``MiniLRUCache::insert``), instead of evicting after
            the worker's reads and never a row it reads. LRU only.
        reread_pushed: a worker's valid copy of a row that another worker also reads this
            iteration is outdated before the worker's own read, which is then an update pull,
            not a hit (Herald's snapshot outdates the keys of a worker's sync plan before its
            reads); the row's state after the iteration is the same.
        lfu_on_insert: HET's released LFU and LFUOpt caches: a worker's misses are inserted
            after all its lookups, each evicting at once the row with the fewest uses, which
            may be one inserted or read in the same iteration; a use is counted at the lookup
            and again at the update (LFUOpt: from 0 at insertion, permanent at the tenth, with
            no limit on permanent rows but the cache's). A row not held at its update is
            pushed at once and not kept (``Send.RELEASE``). Bounded staleness (HET) only; the
            simulator carries it out, the trainers' fixed-size caches cannot (such a row is
            held beyond the cache's rows until its update).
    """

    ascending: bool = False
    evict_on_insert: bool = False
    reread_pushed: bool = False
    lfu_on_insert: bool = False


@dataclass(frozen=True)
class RunPlan:
    """What a scheduler needs from every executor for one run, fixed before the run starts.

    Attributes:
        trace: the trace the scheduler runs on (FAE's reordering, or the trace as given).
        cache_policy: a replacement policy of the scheduler's own (HET), or None for the spec's.
        consistency: a co-writer rule of the scheduler's own (Herald's released code keeps
            co-writers' copies valid), or None for the spec's.
        reads: how the per-worker caches take reads (:class:`ReadRules`).
        replacement_window: future global batches whose rows eviction passes over; 0 = off.
        replicated_rows: (H,) int32 rows replicated on every worker for replicated batches,
            named as ``trace`` names them (FAE's hot set), or None.
        oracle: the cache is one logically replicated set run by an oracle (BagPipe), not W
            per-worker caches; None for per-worker caches.
    """

    trace: TraceSource
    cache_policy: str | None = None
    replacement_window: int = 0
    replicated_rows: np.ndarray | None = None
    oracle: OracleWindow | None = None
    consistency: str | None = None
    reads: ReadRules = ReadRules()

    def __post_init__(self) -> None:
        if self.cache_policy is not None and self.cache_policy not in POLICY_NAMES:
            raise SpecError(
                f"cache policy must be one of {', '.join(POLICY_NAMES)}, got {self.cache_policy!r}"
            )
        if self.consistency is not None and self.consistency not in CONSISTENCY_NAMES:
            raise SpecError(f"consistency must be one of {', '.join(CONSISTENCY_NAMES)}, "
                            f"got {self.consistency!r}")  # fmt: skip
        if self.reads.evict_on_insert and self.cache_policy != "lru":
            raise SpecError(f"eviction on insert is an LRU rule: the plan must name the lru "
                            f"policy, not {self.cache_policy!r}")  # fmt: skip
        if self.replacement_window < 0:
            raise SpecError(f"replacement window must be >= 0, got {self.replacement_window}")

    def policy_or(self, given: str) -> str:
        """The replacement policy the run uses: the plan's own, else ``given`` (the spec's)."""
        return self.cache_policy or given

    def consistency_or(self, given: str) -> str:
        """The co-writer rule the run uses: the plan's own, else ``given`` (the spec's)."""
        return self.consistency or given

    @property
    def replays_trace(self) -> bool:
        """Every batch goes through per-worker caches in demand order: no replicated rows and
        no oracle (the premise of the lower bound)."""
        return self.replicated_rows is None and self.oracle is None


@dataclass(frozen=True)
class PhaseSwitch:
    """Entry into or exit from a replicated phase, before the iteration's reads.

    Entering loads the replicated rows on every worker; leaving writes one replica back (the
    replicas are identical) and outdates every cached copy of those rows.

    Attributes:
        enter: True on entry, False on exit.
        rows: (H,) the replicated rows, named as the stream's trace names them.
    """

    enter: bool
    rows: np.ndarray

    def pulls(self, workers: int) -> int:
        """Miss pulls of the switch: every worker loads every row on entry."""
        return workers * len(self.rows) if self.enter else 0

    def pushes(self) -> int:
        """Pushes of the switch (update pushes; flush pushes at the end of a run)."""
        return 0 if self.enter else len(self.rows)


@dataclass(frozen=True)
class IterationDecisions:
    """Everything decided for one iteration, in the order an executor carries it out.

    Order: (1) ``phase``; (2) sends of kind EVICT, then ``evicted`` copies leave; (3) prefetched
    rows are loaded, then reads are served (pulls and hand-overs first); (4) the update; (5)
    sends of every other kind. Arrays are aligned per record; ``W`` below is the number of
    workers.

    Direct transfers (herald-plus, docs/semantics.md "Syncs"): a ``Send.DIRECT`` of (k, v)
    parks v's copy of k, its value and its pending delta, at v (v's copy stays, clean). A
    direct transfer needs the row's only dirty copy, so a row is parked by one worker at a
    time. At the row's next pulls (by other workers, or by v if it pulls k again) the parked
    copy is *handed over* from v to each reader, one transfer in place of a pull from the PS:
    the reader installs its value; the first of them (``handed_carry``) also takes its delta
    over as its own pending update, so the dirty state moves with the row and reaches the PS
    with that reader's next push. A parked copy is dropped once handed over: each delta
    travels once.

    Attributes:
        iteration: index b of the global batch.
        batch: the global batch's samples.
        assign: (W·m,) worker of each sample.
        replicated: the batch is served by the replicated rows (see :class:`Plan`).
        phase: the phase switch taken before this iteration, or None.
        touched_ids, touched_w, touched_kind: each worker's distinct rows read, in touch order,
            with their :class:`Read` kind (HIT, MISS or UPDATE). Empty for a replicated batch.
        prefetch_ids, prefetch_w: copies loaded before anyone reads them (:attr:`Read.PREFETCH`):
            BagPipe's prefetches and the replicas filled beside an on-demand fetch.
        evicted_ids, evicted_w: copies evicted (their write-back, if dirty, is in ``sent``).
        sent_ids, sent_w, sent_how: dirty copies that left their worker, with their :class:`Send`.
        allreduce_rows: rows all-reduced after this iteration, before the ring factor.
        version_checks: metadata messages (HET's version check per lookup).
        handed_ids, handed_from, handed_to: parked copies handed over at this iteration's
            pulls (see above), in the order of the touched records they serve.
        handed_carry: the reader takes this copy's pending delta over.
        handed_at: the position among the touched records of the pull each hand-over serves;
            found from the keys when not given, and checked against them when given.
        sync_now_ids, sync_later_ids, no_sync_ids: the batch's distinct rows by gradient sync
            class under an oracle (BagPipe): all-reduced before the next iteration, overlapped
            with it, or never (one occurrence, no reuse in the window); ``allreduce_rows``
            counts the first two. Empty for other schedulers.
        lease_ids, lease_ends: under an oracle, the batch's cached rows kept after this
            iteration and the iteration their lease now ends (their last use known in the
            window); the batch's other cached rows expire and leave at the next cleanup point.
    """

    iteration: int
    batch: SampleChunk
    assign: np.ndarray
    replicated: bool
    touched_ids: np.ndarray
    touched_w: np.ndarray
    touched_kind: np.ndarray
    evicted_ids: np.ndarray
    evicted_w: np.ndarray
    sent_ids: np.ndarray
    sent_w: np.ndarray
    sent_how: np.ndarray
    phase: PhaseSwitch | None = None
    prefetch_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    prefetch_w: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    allreduce_rows: int = 0
    version_checks: int = 0
    handed_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    handed_from: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    handed_to: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    handed_carry: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    handed_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    sync_now_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    sync_later_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    no_sync_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    lease_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    lease_ends: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __post_init__(self) -> None:
        if self.handed_at.size != self.handed_ids.size:
            object.__setattr__(self, "handed_at", self._find_handed())
        elif self.handed_at.size:
            served = record_keys(self.touched_ids[self.handed_at], self.touched_w[self.handed_at])
            if not np.array_equal(served, record_keys(self.handed_ids, self.handed_to)):
                raise InvariantViolation(f"iteration {self.iteration}: a hand-over's position "
                                         "names another touched record than its row and reader")

    def pulled_from_ps(self) -> np.ndarray:
        """Per touched record: a pull (MISS or UPDATE) served by the row's owner, not handed
        over."""
        pulled = (self.touched_kind == Read.MISS) | (self.touched_kind == Read.UPDATE)
        pulled[self.handed_at] = False
        return pulled

    def _find_handed(self) -> np.ndarray:
        """The pull each hand-over serves: the touched MISS or UPDATE record of its row and
        reader, in the hand-overs' order."""
        pulls = np.flatnonzero((self.touched_kind == Read.MISS)
                               | (self.touched_kind == Read.UPDATE))  # fmt: skip
        keys = record_keys(self.touched_ids[pulls], self.touched_w[pulls])
        order = np.argsort(keys, kind="stable")
        at, found = find_sorted(keys[order], record_keys(self.handed_ids, self.handed_to))
        if not found.all():
            i = int(np.flatnonzero(~found)[0])
            raise InvariantViolation(f"iteration {self.iteration}: row {int(self.handed_ids[i])} "
                                     f"handed over to worker {int(self.handed_to[i])}, which "
                                     "does not pull it")
        return pulls[order[at]]

    def allreduce(self, workers: int) -> float:
        """All-reduce traffic in row-transfers per worker (ring factor applied)."""
        return ring_allreduce(self.allreduce_rows, workers)


def record_keys(ids: np.ndarray, workers: np.ndarray) -> np.ndarray:
    """One int64 key per (row, worker) record (workers < 2^8, as the spec allows)."""
    return (np.asarray(ids, np.int64) << 8) | np.asarray(workers, np.int64)


class SingleWriters:
    """Under an oracle (BagPipe), the replicated rows whose last update was a no-sync one (one
    occurrence in its batch, never all-reduced), and the worker that made it.

    Until such a row is written back, only that worker's replica holds its current value; the
    replicas of every other row are identical (all-reduced). Whoever writes a row back (an
    eviction, the flush) sends that worker's replica: the rule for the stream's write-backs and
    the trainers' flush alike.

    Args:
        rows: rows of the table (every id is below it).
    """

    def __init__(self, rows: int) -> None:
        self._writer = np.full(rows, -1, np.int8)  # -1: the replicas agree (workers <= 64)
        self._marked = np.zeros(rows, bool)  # scratch: the rows looked for in a batch

    def record(self, batch_ids: np.ndarray, assign: np.ndarray, no_sync: np.ndarray,
               synced: np.ndarray) -> None:  # fmt: skip
        """After an iteration's update: ``synced`` rows were all-reduced, each ``no_sync`` row
        was updated by the one worker whose sample read it (``batch_ids``, ``assign``)."""
        self._writer[np.asarray(synced, np.int64)] = -1
        if not no_sync.size:
            return
        flat = batch_ids.reshape(-1)
        self._marked[no_sync] = True
        at = np.flatnonzero(self._marked[flat])  # a pad repeats its sample's id: same worker
        self._marked[no_sync] = False
        self._writer[flat[at]] = assign[at // batch_ids.shape[1]]

    def step(self, dec: IterationDecisions) -> None:
        """An iteration, after its write-backs were sent: the rows evicted before it forgotten,
        its update recorded, the rows staged for it (written back after it) forgotten."""
        self.forget(dec.sent_ids[dec.sent_how == Send.EVICT])
        self.record(dec.batch.ids, dec.assign, dec.no_sync_ids,
                    np.concatenate([dec.sync_now_ids, dec.sync_later_ids]))
        self.forget(dec.sent_ids[dec.sent_how == Send.RELEASE])

    def writers(self, rows: np.ndarray) -> np.ndarray:
        """The worker whose replica of each of ``rows`` is current: its single writer, else
        worker 0."""
        return np.maximum(self._writer[np.asarray(rows, np.int64)], 0)

    def forget(self, rows: np.ndarray) -> None:
        """``rows`` were written back (their replicas agree with the PS again)."""
        self._writer[np.asarray(rows, np.int64)] = -1
