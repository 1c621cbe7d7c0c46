"""Executor of a logically replicated cache: BagPipe's Oracle Cacher with capacity enforced.

BagPipe's trainers share one cache-membership set S; every worker holds a replica of every row
of S (K rows per worker), so the per-worker simulator cannot run it. The rules below follow
BagPipe's published code (docs/conformance.md) and the counter names of docs/semantics.md.

**Window.** Lookahead L, cleanup interval ``c = max(1, int(cleanup_proportion · L))``. When
iteration b runs, the oracle knows batches ``[b, b+L)``; a row is *reused in the window* when a
batch of ``(b, b+L)`` uses it. L = 1 knows nothing ahead (BagPipe's no-prefetch baseline).

**Cleanup points** are the iterations p with ``p % c == 0``, before p runs. Each one

1. waits for every in-flight all-reduce (BagPipe's write-back barrier), then evicts every row
   whose lease expired (below): a row updated since it was loaded is written back once,
   **evict_push** += 1 (replicas are identical after the all-reduce; a no-sync row is written
   back by its single trainer; still one row);
2. prefetches, after the write-backs have landed, the rows of the window's batches not in S:
   whole batches in order from the first batch not yet loaded, stopping at the first batch
   whose missing rows would take S beyond K (it is tried again at the next cleanup point).
   Every replica loads a prefetched row: **miss_pull** += W per row, counted when issued.

**Leases (TTL).** A row's lease ends at its last use in the window known when it is loaded or
used; a use re-extends it. A row used at b with no reuse in the window is evicted at the first
cleanup point after b, even when a batch that entered the window later uses it (BagPipe's
lease is only extended by a use; the row is then written back and prefetched again).

**Reads.** ``lookups`` counts each worker's distinct ids per iteration, exactly as the other
schedulers do (same random partition for the same seed). A lookup of a row in S is a **hit**:
the oracle guarantees its replica is current (checked, see below). Prefetch pulls are not
lookups. Hence ``lookups = hits + demand pulls``, while ``miss_pull`` also holds the prefetch
and replica-fill pulls: for this executor ``lookups != hits + miss_pull + update_pull``; the
difference is ``info["prefetch_pull"] + info["replica_fill"]``. update_pull is always 0.

**What happens when the window's working set does not fit.** K must hold the distinct rows of
every global batch (CapacityError otherwise, raised as the batch enters the window, before any
of it runs; the simulation never needs more, since rows that do not fit are streamed). A batch
whose rows are not all in S when it runs fetches the missing ones on demand: each worker that
reads a missing row pulls it (**miss_pull** += its readers; these lookups are not hits). Then,
while S has free slots, missing rows reused in the window are admitted to S (sync-now rows
first, then the others in batch order); the other replicas load them too (**miss_pull** +=
W − readers, the "replica fill"), and they follow the lease rules above. The rest are
*transient*: staged for this iteration only, outside the K slots, and written back right after
their gradient is reduced (**evict_push** += 1 each, at b). Rows without a known reuse are
never admitted (a transient fetch costs readers + 1 rows, an admitted one W + 1). Expired rows
stay in S until the next cleanup point, as in BagPipe, and take slots until then.

**Gradient sync after iteration b** (per distinct row of b; independent of the cache state):
rows also used by b+1 are **sync-now** (all-reduced before b+1 runs); rows that occur exactly
once in global batch b (one sample, one worker) and are not reused in the window are
**no-sync** (never all-reduced; the one trainer's replica is the only current one until the row
is written back at its eviction); every other row is **sync-later** (all-reduced overlapped with
b+1, landing before b+2; as in BagPipe's code this includes rows used several times in b and
never again). **allreduce** += (sync-now + sync-later) × 2(W−1)/W row-transfers per worker.
Class counts are in ``info`` (sync_now, sync_later, no_sync).

**End.** Rows of S still dirty are the **flush_push**. update_push and metadata are 0.

**The released oracle** (``OracleWindow.bounded`` and ``runs_tail`` False; BagPipe's
``variant: released``): K is never looked at (every window's rows are prefetched, nothing is
fetched on demand, nothing is transient), and the last L batches of the trace only fill the
window: ``batches − L`` iterations run, the rest count as dropped samples.

**Consistency** (``check_invariants=True``, ``_replicated_check``): a per-row version model
checks that no read sees a replica older than the row's last update, that every pull
(prefetch or on-demand) finds the PS current (write-back landed), that the lease rules and
capacity hold, and that its independent counts equal the kernels'.

``policy`` and ``consistency`` are accepted for the common signature and ignored: the oracle's
lease is the replacement policy, and co-written rows are reduced by the all-reduce.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import numpy as np

from heraldbench.platform.contract import OracleWindow, Series
from heraldbench.platform.data import SampleChunk, TraceSource
from heraldbench.platform.data.ragged import marked_pads, real_ids
from heraldbench.platform.exceptions import CapacityError, InvariantViolation, SpecError
from heraldbench.platform.metrics import Counts, ring_allreduce
from heraldbench.platform.schedulers import CacheView, Scheduler
from heraldbench.platform.sim import _replicated_kernels as kern
from heraldbench.platform.sim._replicated_moves import Moves
from heraldbench.platform.sim._simulator import SERIES, SimResult, global_batches
from heraldbench.platform.sim._state import POLICIES

__all__ = ["simulate_replicated"]

_BATCHES_PER_CHUNK = 64
#: Partitions are decided as a batch enters the window, before the cache state of its iteration
#: exists; every replica holds the same rows, so a location-aware view would be moot anyway.
_NO_VIEW = CacheView(valid=np.zeros(0, np.uint8), cached=np.zeros(0, np.uint8))
_HITS, _MISS, _EVICT, _ALLREDUCE = (Series.HITS, Series.MISS_PULL, Series.EVICT_PUSH,
                                    Series.ALLREDUCE)

ProgressCallback = Callable[[int, int], None]


def simulate_replicated(
    trace: TraceSource,
    scheduler: Scheduler,
    oracle: OracleWindow,
    *,
    cache_rows: int,
    policy: str = "lru",
    consistency: str = "strict",
    check_invariants: bool = False,
    record_partitions: bool = False,
    progress: ProgressCallback | None = None,
) -> SimResult:
    """Run a logically replicated cache scheduler (BagPipe) over ``trace``.

    The run plan's ``oracle`` gives ``lookahead`` (L) and ``cleanup_interval`` (c), the
    scheduler the partition; ``cache_rows`` is K, the rows each replica holds. Arguments are
    those of ``simulate``; ``trace`` is the plan's trace (``simulate`` passes it).
    """
    if policy not in POLICIES:
        raise SpecError(f"cache policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if consistency not in ("strict", "optimistic"):
        raise SpecError(f"consistency must be 'strict' or 'optimistic', got {consistency!r}")
    if cache_rows < 1:
        raise CapacityError(f"cache_rows must be >= 1, got {cache_rows}")
    run = _Run(trace, scheduler, oracle, cache_rows, check_invariants, record_partitions)
    return run.execute(progress)


class _Window:
    """The look-ahead ring: distinct rows, reader counts and flags of L+1 batches."""

    def __init__(self, slots: int, width: int, rows: int) -> None:
        self.uniq = np.zeros((slots, width), np.int32)
        self.nread = np.zeros((slots, width), np.uint8)
        self.flags = np.zeros((slots, width), np.uint8)
        self.counts = np.zeros(slots, np.int32)
        self.masks = np.zeros(width, np.uint64)  # scratch: reader bitmask per distinct row
        self.latest = np.full(rows, -1, np.int32)
        self.pos = np.zeros(rows, np.int32)

    def add(self, j: int, ids: np.ndarray, counted: np.ndarray,
            assign: np.ndarray) -> tuple[int, int]:
        s, prev = j % len(self.counts), (j - 1) % len(self.counts)
        n, lookups = kern.enqueue_batch(
            ids, counted, counted is not ids, assign, j, self.latest, self.pos, self.uniq[s],
            self.nread[s], self.flags[s], self.flags[prev], self.masks,
        )  # fmt: skip
        self.counts[s] = n
        return n, lookups

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.uniq, self.nread, self.flags, self.masks,
                                      self.latest, self.pos))


class _Run:
    """The logically replicated cache's state machine; with ``log`` (a :class:`Moves`) it also
    records the rows each cleanup and run moves, for the decision stream."""

    def __init__(self, trace, scheduler, oracle, capacity, check, record, log=None) -> None:
        self.trace, self.scheduler = trace, scheduler
        self.log: Moves | None = log
        self.workers, self.lookahead = scheduler.workers, oracle.lookahead
        self.interval = oracle.cleanup_interval
        self.fields = trace.layout.ids_per_sample
        self.batches = trace.num_samples // scheduler.global_batch
        self.accessed = np.zeros(self.batches, np.int64)  # ids each batch reads, pads left out
        self.iterations = (self.batches if oracle.runs_tail
                           else max(0, self.batches - self.lookahead))  # fmt: skip
        rows = trace.layout.total_rows
        capacity = capacity if oracle.bounded else rows  # every row fits: the bound is never hit
        self.capacity = capacity
        width = scheduler.global_batch * self.fields
        # the window never holds more batches than the trace has (a longer L sees them all); the
        # released oracle runs fewer iterations than batches, and its window still holds L + 1
        self.window = _Window(min(self.lookahead, self.batches) + 1, width, rows)
        self.state = np.zeros(rows, np.uint8)
        self.occupancy = np.zeros(1, np.int64)
        self.pending = np.zeros(min(capacity, rows), np.int32)
        self.n_pending = 0
        self.frontier = 0  # first batch not loaded by a prefetch or run
        self.missing = np.zeros(width, np.uint8)
        self.classes = np.zeros(width, np.uint8)
        self.series = np.zeros((self.iterations, len(SERIES)), np.float64)
        self.totals = np.zeros(kern.RUN_COUNTS, np.int64)
        self.prefetched = 0
        self.peak = 0
        self.allreduce_per_row = ring_allreduce(1, self.workers)
        self.partitions = (np.zeros((self.iterations, scheduler.global_batch), np.int8)
                           if record else None)
        self.checker = None
        if check:
            from heraldbench.platform.sim._replicated_check import ReplicaChecker

            self.checker = ReplicaChecker(rows, self.workers, capacity, self.lookahead,
                                          self.batches)

    def execute(self, progress: ProgressCallback | None) -> SimResult:
        start = time.perf_counter()
        for _ in self.steps(progress):
            pass
        return self._result(time.perf_counter() - start)

    def steps(self, progress: ProgressCallback | None = None) -> Iterator[int]:
        """Run the trace, yielding each iteration once its cleanup and run are done."""
        batches = global_batches(self.trace, self.scheduler.global_batch, self.log is None)
        enqueued = 0
        for b in range(self.iterations):
            while enqueued < min(b + self.lookahead, self.batches):
                self._enqueue(enqueued, next(batches))
                enqueued += 1
            if self.log is not None:
                self.log.start(b)
            if b % self.interval == 0:
                self._cleanup(b)
            self._run(b)
            self.peak = max(self.peak, int(self.occupancy[0]))
            yield b
            if progress is not None and (b + 1) % _BATCHES_PER_CHUNK == 0:
                progress((b + 1) * self.scheduler.global_batch, self.trace.num_samples)
        if progress is not None:
            progress(self.trace.num_samples, self.trace.num_samples)

    def _enqueue(self, j: int, batch: SampleChunk) -> None:
        ids = batch.ids
        self.accessed[j] = real_ids(batch.lengths, len(batch), self.fields)
        counted = marked_pads(ids, batch.lengths, self.trace.layout.table_widths)
        assign = np.ascontiguousarray(self.scheduler.partition(ids, _NO_VIEW, j), np.int32)
        if self.log is not None:
            self.log.enqueue(j, batch, assign)
        if self.partitions is not None and j < self.iterations:
            self.partitions[j] = assign
        n, _ = self.window.add(j, ids, counted, assign)
        if n > self.capacity:
            raise CapacityError(
                f"batch {j} has {n:,} distinct rows but the replicated cache holds "
                f"{self.capacity:,} rows per worker; use at least {n:,} rows"
            )
        if self.checker is not None:
            self.checker.add_batch(j, ids, assign, counted)

    def _cleanup(self, p: int) -> None:
        evicted = self.pending[: self.n_pending].copy() if self.checker is not None else None
        if self.log is not None:
            self.log.before_evict(self.pending[: self.n_pending], self.state)
        written = kern.evict_pending(self.state, self.pending, self.n_pending, self.occupancy)
        self.n_pending = 0
        stop = min(p + self.lookahead, self.batches)
        w = self.window
        first = max(self.frontier, p)
        if self.log is not None:
            self.log.before_prefetch(w.uniq, w.counts, first, stop, self.state)
        self.frontier, loaded = kern.prefetch(first, stop, w.uniq, w.counts, self.state,
                                              self.occupancy, self.capacity)  # fmt: skip
        if self.log is not None:
            self.log.after_prefetch(self.state)
        self.series[p, _EVICT] += written
        self.series[p, _MISS] += self.workers * loaded
        self.prefetched += self.workers * loaded
        if self.checker is not None:
            expected = self.checker.cleanup(p, evicted, self._resident())
            _compare(f"cleanup {p}", expected, (written, loaded))

    def _run(self, b: int) -> None:
        w, s = self.window, b % len(self.window.counts)
        out = np.zeros(kern.RUN_COUNTS, np.int64)
        pending_before = self.n_pending
        if self.log is not None:
            self.log.before_run(w.uniq[s, : w.counts[s]], self.state)
        self.n_pending = kern.run_batch(
            b, self.workers, self.capacity, w.uniq[s], w.nread[s], w.flags[s], w.counts[s],
            w.latest, self.state, self.occupancy, self.missing, self.classes, self.pending,
            self.n_pending, out,
        )  # fmt: skip
        self.frontier = max(self.frontier, b + 1)
        self.totals += out
        if self.log is not None:
            self.log.after_run(self.state, self.classes, w.latest,
                               self.pending[pending_before : self.n_pending],
                               int(out[kern.SYNC_NOW] + out[kern.SYNC_LATER]))  # fmt: skip
        row = self.series[b]
        row[_HITS] += out[kern.LOOKUPS] - out[kern.DEMAND]
        row[_MISS] += out[kern.DEMAND] + out[kern.FILL]
        row[_EVICT] += out[kern.TRANSIENT]
        row[_ALLREDUCE] += (out[kern.SYNC_NOW] + out[kern.SYNC_LATER]) * self.allreduce_per_row
        if self.checker is not None:
            expected = self.checker.run(b, self._resident())
            _compare(f"iteration {b}", expected, tuple(int(x) for x in out))

    def _resident(self) -> np.ndarray:
        return (self.state & kern.IN) != 0

    def _result(self, wall: float) -> SimResult:
        sums = self.series.sum(axis=0)
        t = self.totals
        flush = int(kern.count_dirty(self.state))
        if self.checker is not None:
            _compare("flush", (self.checker.flush(),), (flush,))
        counts = Counts.from_series(  # prefetch pulls are no lookups: lookups given
            {column.key: sums[column] for column in Series},
            accesses=int(self.accessed[: self.iterations].sum()),
            flush_push=flush,
            lookups=int(t[kern.LOOKUPS]),
        )
        info = {
            "policy": "oracle-lease",
            "trace": self.trace.describe(),
            "lookahead": self.lookahead,
            "cleanup_interval": self.interval,
            "sync_now": int(t[kern.SYNC_NOW]),
            "sync_later": int(t[kern.SYNC_LATER]),
            "no_sync": int(t[kern.NO_SYNC]),
            "prefetch_pull": self.prefetched,
            "demand_pull": int(t[kern.DEMAND]),
            "replica_fill": int(t[kern.FILL]),
            "transient_rows": int(t[kern.TRANSIENT]),
            "peak_occupancy": self.peak,
        }
        nbytes = self.window.nbytes() + self.state.nbytes + self.pending.nbytes
        return SimResult(
            counts=counts,
            series={name: self.series[:, i] for i, name in enumerate(SERIES)},
            iterations=self.iterations,
            samples_dropped=self.trace.num_samples - self.iterations * self.scheduler.global_batch,
            wall_seconds=wall,
            state_bytes=nbytes,
            partitions=self.partitions,
            info=info,
        )


def _compare(where: str, expected: tuple[int, ...], got: tuple[int, ...]) -> None:
    if tuple(expected) != tuple(got):
        raise InvariantViolation(f"{where}: checker counts {expected} != executor counts {got}")
