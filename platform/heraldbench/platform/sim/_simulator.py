"""The trace-driven simulator: executes a scheduler's decisions and counts the traffic of docs/semantics.md.

Two passes run in lockstep over the trace. The *residency* pass partitions each batch, classifies
reads and evicts; the *sync* pass trails it by the scheduler's look-ahead window and accounts the
pushes. Splitting them is exact because which copies are cached and valid never depends on when a
dirty row is pushed, only on who reads and writes it (docs/semantics.md). Where the sync pass
needs no more than one iteration's writes (write-through, and on-demand sync one iteration
ahead, whose readers are the next iteration's writers), it is taken with those writes, in the
same pass over the rows (:func:`._sync.write_and_sync`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from heraldbench.platform.contract import PhaseSwitch, RunPlan, Series
from heraldbench.platform.data import FirstSeenTrace, SampleChunk, TraceSource, read_ahead
from heraldbench.platform.data.ragged import marked_pads, real_ids
from heraldbench.platform.exceptions import CapacityError, InvariantViolation, SpecError
from heraldbench.platform.metrics import Counts, ring_allreduce
from heraldbench.platform.schedulers import Scheduler, SyncRule
from heraldbench.platform.sim import _kernels, _released, _sync
from heraldbench.platform.sim._bundles import ReadSettings, SyncSettings
from heraldbench.platform.sim._state import POLICIES, ClusterState, IterationRecords

__all__ = ["SERIES", "SimResult", "simulate"]

#: Per-iteration series recorded for every run, in column order (:class:`Series`).
SERIES = tuple(column.key for column in Series)
_BATCHES_PER_CHUNK = 64

ProgressCallback = Callable[[int, int], None]  # (samples done, samples total)


@dataclass
class SimResult:
    """Counts, per-iteration series and facts of one simulated run."""

    counts: Counts
    series: dict[str, np.ndarray]
    iterations: int
    samples_dropped: int
    wall_seconds: float
    state_bytes: int
    partitions: np.ndarray | None = None  # (iterations, W·m) worker of each sample, if recorded
    info: dict[str, object] = field(default_factory=dict)


def simulate(
    trace: TraceSource,
    scheduler: Scheduler,
    *,
    cache_rows: int,
    policy: Literal["lru", "lfu", "lfuopt"] = "lru",
    consistency: Literal["strict", "optimistic"] = "strict",
    check_invariants: bool = False,
    record_partitions: bool = False,
    progress: ProgressCallback | None = None,
    renumber_rows: bool = True,
    plan: RunPlan | None = None,
) -> SimResult:
    """Run ``scheduler`` over ``trace`` with caches of ``cache_rows`` rows per worker.

    Args:
        check_invariants: verify the invariants of docs/semantics.md after every iteration
            (slow: O(rows) per iteration; for tests).
        record_partitions: keep every iteration's partition in ``SimResult.partitions`` (for the
            lower bound); W·m bytes per iteration.
        progress: called with (samples done, samples total) after every chunk.
        renumber_rows: simulate on the trace with rows numbered in order of first appearance
            (:class:`FirstSeenTrace`), for memory locality; the counts are the same either way.
            Ignored where the plan's reads depend on row numbers (``ReadRules.ascending``).
        plan: the scheduler's run plan for ``trace`` if the caller already has it
            (``scheduler.plan_run(trace)``, which is called otherwise).
    """
    # The scheduler plans on the trace as given (FAE ranks rows by their original numbers).
    plan = plan if plan is not None else scheduler.plan_run(trace)
    renumber = renumber_rows and not plan.reads.ascending
    trace = FirstSeenTrace(plan.trace) if renumber else plan.trace
    if plan.oracle is not None:
        from heraldbench.platform.sim._replicated import simulate_replicated

        return simulate_replicated(
            trace, scheduler, plan.oracle, cache_rows=cache_rows, policy=policy,
            consistency=consistency, check_invariants=check_invariants,
            record_partitions=record_partitions, progress=progress,
        )  # fmt: skip
    run = _Run(trace, scheduler, plan, cache_rows, policy, consistency, check_invariants,
               record_partitions)
    return run.execute(progress)


class _Run:
    """The per-worker caches' state machine: one run of ``scheduler`` over ``trace`` (the
    plan's trace, possibly renumbered), making every decision of the stream and counting it."""

    def __init__(self, trace, scheduler, plan, cache_rows, policy, consistency, check, record,
                 log_sent=False):
        self.trace = trace
        self.scheduler, self.check = scheduler, check
        self.counts_only = not log_sent  # no executor reads the batches' labels and features
        self.policy = plan.policy_or(policy)
        consistency = plan.consistency_or(consistency)
        self.replicated_rows = plan.replicated_rows
        _validate(self.trace, scheduler, cache_rows, self.policy, consistency)
        self.reread_pushed = plan.reads.reread_pushed
        bounded = scheduler.sync_policy.rule is SyncRule.BOUNDED_STALENESS
        if plan.reads.lfu_on_insert and not bounded:
            raise SpecError("HET's released LFU rules (ReadRules.lfu_on_insert) need bounded "
                            "staleness")  # fmt: skip
        #: rows may be read and then left out of the cache before their update (HET's released
        #: LFU and LFUOpt), which no trainer's fixed-size cache can carry out
        self.transient_rows = plan.reads.lfu_on_insert and self.policy != "lru"
        self.workers, self.m = scheduler.workers, scheduler.batch_size
        self.fields = self.trace.layout.ids_per_sample
        self.widths = self.trace.layout.table_widths
        self.accessed = 0  # ids the batches so far read, pads of ragged tables left out
        self.sync = scheduler.sync_policy
        self.het = self.sync.rule is SyncRule.BOUNDED_STALENESS
        self.lag = self.sync.lag
        self.strict = consistency == "strict"
        self.window = plan.replacement_window  # batches state.ahead looks ahead
        self.state = ClusterState.empty(
            self.trace.layout.total_rows, self.workers, cache_rows, self.m * self.fields,
            self.policy, staleness_bound=self.sync.bound if self.het else None,
            window=self.window > 0,
        )  # fmt: skip
        self.lag_max = int(np.iinfo(self.state.lag.dtype).max)  # where HET's clock leads saturate
        record_size = scheduler.global_batch * self.fields
        self.ring = [
            IterationRecords.empty(record_size, self.workers, log_sent) for _ in range(self.lag + 1)
        ]
        s = self.state  # the read kernel's bundles, as plain tuples (see _bundles)
        settings = ReadSettings(
            workers=self.workers, capacity=s.capacity, policy=s.policy,
            permanent_cap=s.permanent_cap, bound=self.sync.bound if self.het else -1,
            per_occurrence=self.sync.clock_unit == "occurrence", ascending=plan.reads.ascending,
            evict_on_insert=plan.reads.evict_on_insert, lfu_on_insert=plan.reads.lfu_on_insert,
        )  # fmt: skip
        self.read_args = (tuple(settings), tuple(s.read_rows()), tuple(s.evictor()))
        self.read_batch = _kernels.read_kernel(settings)
        self.touches = [tuple(rec.touches()) for rec in self.ring]
        self.sync_settings = SyncSettings(
            self.workers, bool(self.sync.direct), self.strict, bool(self.check)
        )  # the sync kernels' bundles (they take them as tuples: see _bundles)
        self.sync_rows = s.sync_rows()
        self.batch_ring: list[SampleChunk | None] = [None] * (self.lag + 1)
        self.assign_ring: list[np.ndarray | None] = [None] * (self.lag + 1)
        self.replicated_ring = [False] * (self.lag + 1)
        self.phase_ring: list[PhaseSwitch | None] = [None] * (self.lag + 1)
        self.allreduce_ring = [0] * (self.lag + 1)
        self.checks_ring = [0] * (self.lag + 1)  # HET's version checks of each iteration
        self.iterations = self.trace.num_samples // scheduler.global_batch
        self.series = np.zeros((self.iterations, len(SERIES)), np.float64)
        self.sync_counts = np.zeros(3, np.int64)
        self.partitions = (
            np.zeros((self.iterations, scheduler.global_batch), np.int8) if record else None
        )
        self.hot_phase = False
        # Write-through, and on-demand sync one iteration ahead, push only on what the writes
        # of an iteration show, so their syncs are taken with those writes (_sync.write_and_sync).
        self.sync_with_writes = not self.het and (
            self.sync.rule is not SyncRule.ON_DEMAND or self.sync.window == 1
        )

    def execute(self, progress: ProgressCallback | None) -> SimResult:
        start = time.perf_counter()
        for _ in self.completed_iterations(progress):
            pass
        return self._result(time.perf_counter() - start)

    def completed_iterations(self, progress: ProgressCallback | None = None) -> Iterator[int]:
        """Run the trace, yielding each iteration once all its decisions (syncs too) are made;
        its records stay in ``ring[iteration % len(ring)]`` until the next value is requested."""
        done = 0
        for iteration, batch in self._batches():
            completed = self._step(iteration, batch)
            if completed is not None:
                yield completed
            done += len(batch)
            if progress is not None and (iteration + 1) % _BATCHES_PER_CHUNK == 0:
                progress(done, self.trace.num_samples)
        if not self.het:
            for iteration in range(max(0, self.iterations - self.lag), self.iterations):
                if not self.sync_with_writes:  # else the last iteration has no readers ahead
                    self._sync(iteration)
                yield iteration
        if progress is not None:
            progress(self.trace.num_samples, self.trace.num_samples)
        if self.sync_counts[2]:
            raise InvariantViolation(f"{self.sync_counts[2]} pulls read a row with a dirty copy")

    def _batches(self) -> Iterator[tuple[int, SampleChunk]]:
        """Global batches in order; with a replacement window, when batch t is yielded the
        window holds batches t+1..t+``window`` and ``state.ahead`` the last of them to read
        each row, so a row is read again within the window exactly when ``ahead`` > t."""
        window: deque[SampleChunk] = deque()
        for index, batch in enumerate(self._raw_batches()):
            if self.window:
                _kernels.enter_window(batch.ids, np.int32(index), self.state.ahead)
            window.append(batch)
            if len(window) > self.window:
                yield index - self.window, window.popleft()
        first_left = self.iterations - len(window)
        for offset in range(len(window)):
            yield first_left + offset, window.popleft()

    def _raw_batches(self) -> Iterator[SampleChunk]:
        return global_batches(self.trace, self.scheduler.global_batch, self.counts_only)

    def _step(self, iteration: int, batch: SampleChunk) -> int | None:
        """Residency of ``iteration``; returns the iteration whose syncs completed, if any."""
        s = self.state
        self.accessed += real_ids(batch.lengths, len(batch), self.fields)
        counted = marked_pads(batch.ids, batch.lengths, self.widths)
        view = s.view() if counted is batch.ids else replace(s.view(), counted_ids=counted)
        plan = self.scheduler.plan(batch.ids, view, iteration)
        assign = np.ascontiguousarray(plan.assign, dtype=np.int32)
        if self.check:
            _check_partition(assign, self.workers, self.m, iteration)
        if self.partitions is not None:
            self.partitions[iteration] = assign
        slot = iteration % len(self.ring)
        rec = self.ring[slot]
        self.batch_ring[slot], self.assign_ring[slot] = batch, assign
        self.replicated_ring[slot] = plan.replicated
        self.phase_ring[slot] = self._switch_phase(iteration, plan.replicated)
        self.allreduce_ring[slot] = plan.allreduce_rows
        rec.sent_n[0] = 0  # this iteration's push log fills from here to the end of its syncs
        if plan.replicated:
            rec.clear()
            self.series[iteration, Series.ALLREDUCE] += ring_allreduce(plan.allreduce_rows,
                                                                       self.workers)
        else:
            self._read_and_write(iteration, batch.ids, counted, assign, rec)
        if self.check:
            _check_state(s, iteration)
        if self.het:
            self._sync_bounded_staleness(iteration, rec)
            return iteration
        if iteration >= self.lag:
            if not self.sync_with_writes:
                self._sync(iteration - self.lag)
            return iteration - self.lag
        return None

    def _switch_phase(self, iteration: int, replicated: bool) -> PhaseSwitch | None:
        """FAE's phase switches: load the replicated table on entry, write it back on exit."""
        if replicated == self.hot_phase:
            return None
        if self.replicated_rows is None:
            raise InvariantViolation(
                f"iteration {iteration}: a replicated batch, but the run plan names no rows"
            )
        switch = PhaseSwitch(replicated, self.replicated_rows)
        self.series[iteration, Series.MISS_PULL] += switch.pulls(self.workers)
        self.series[iteration, Series.UPDATE_PUSH] += switch.pushes()
        if not replicated:
            # the scheduler named its rows on the trace before the simulator renumbered it
            _sync.invalidate(self.trace.renumbered(switch.rows), self.state.valid)
        self.hot_phase = replicated
        return switch

    def _read_and_write(self, iteration, ids, counted, assign, rec) -> None:
        s = self.state
        counts = np.zeros(3, np.int64)
        rec_slot = iteration % len(self.ring)
        rec.n_touched, rec.n_evicted, rec.n_pushed = self.read_batch(
            ids, counted, assign, iteration, *self.read_args, self.touches[rec_slot], counts,
        )  # fmt: skip
        if self.reread_pushed:
            _released.reread_shared_hits(rec.touched_ids, rec.touched_w, rec.touched_kind,
                                        rec.n_touched, s.writers, counts)  # fmt: skip
        self.series[iteration, : Series.EVICT_PUSH] += counts
        if self.sync_with_writes:
            self._write_and_sync(iteration, rec)
        elif not self.het:
            rec.n_written = _kernels.write_batch(
                rec.touched_ids, rec.touched_w, rec.n_touched, s.writers, s.valid,
                not self.strict, rec.write_ids, rec.write_masks,
            )  # fmt: skip

    def _write_and_sync(self, iteration: int, rec: IterationRecords) -> None:
        """Writes of ``iteration`` with the pushes of the previous iteration they decide (on
        demand) and its own evict and write-through pushes."""
        before = self.ring[(iteration - 1) % len(self.ring)]
        counts_before, counts = np.zeros(3, np.int64), np.zeros(3, np.int64)
        rec.n_written = _sync.write_and_sync(
            self.sync_settings, self.sync.rule is SyncRule.ON_DEMAND, iteration > 0,
            rec.touch_list(), rec.eviction_list(), self.sync_rows, rec.write_ids, rec.write_masks,
            counts_before, counts, before.push_log(), rec.push_log(),
        )  # fmt: skip
        if iteration > 0:
            self.series[iteration - 1, Series.UPDATE_PUSH] += counts_before[1]
        self.series[iteration, Series.EVICT_PUSH : Series.ALLREDUCE] += counts[:2]
        self.sync_counts[2] += counts[2]

    def _sync_bounded_staleness(self, iteration: int, rec: IterationRecords) -> None:
        s = self.state
        counts = np.zeros(2, np.int64)
        _sync.bounded_staleness_sync(
            rec.touch_list(), rec.held_pushes(), rec.eviction_list(), s.cached, s.lag,
            self.lag_max, counts, rec.push_log(),
        )  # fmt: skip
        self.series[iteration, Series.EVICT_PUSH : Series.ALLREDUCE] += counts
        checks = rec.n_touched  # a version check per lookup
        self.checks_ring[iteration % len(self.ring)] = checks
        self.series[iteration, Series.METADATA] += checks

    def _sync(self, iteration: int) -> None:
        """Push accounting of ``iteration`` under an on-demand window longer than one
        iteration; the residency pass has reached iteration + lag."""
        rec = self.ring[iteration % len(self.ring)]
        ahead_iteration = min(iteration + self.lag, self.iterations - 1)
        ahead = self.ring[ahead_iteration % len(self.ring)]
        n_ahead = ahead.n_written if ahead_iteration > iteration else 0
        before = self.sync_counts[:2].copy()
        _sync.sync_iteration(
            iteration, self.sync_settings, rec.touch_list(), rec.eviction_list(),
            rec.write_list(), ahead.write_list(n_ahead), self.sync_rows, self.sync_counts,
            rec.push_log(),
        )  # fmt: skip
        self.series[iteration, Series.EVICT_PUSH : Series.ALLREDUCE] += (
            self.sync_counts[:2] - before
        )

    def _flush(self) -> int:
        s = self.state
        flush = _sync.count_pending(s.pending) if self.het else _sync.count_dirty(s.dirty)
        if self.hot_phase:
            flush += PhaseSwitch(False, self.replicated_rows).pushes()
        return int(flush)

    def _result(self, wall: float) -> SimResult:
        totals = self.series.sum(axis=0)
        counts = Counts.from_series(
            {c.key: totals[c] for c in Series},
            accesses=self.accessed,
            flush_push=self._flush(),
        )
        return SimResult(
            counts=counts,
            series={name: self.series[:, i] for i, name in enumerate(SERIES)},
            iterations=self.iterations,
            samples_dropped=self.trace.num_samples - self.iterations * self.scheduler.global_batch,
            wall_seconds=wall,
            state_bytes=self.state.nbytes(),
            partitions=self.partitions,
            info={"policy": self.policy, "trace": self.trace.describe()},
        )


def global_batches(trace: TraceSource, global_batch: int,
                   ids_only: bool = False) -> Iterator[SampleChunk]:  # fmt: skip
    """The trace's whole global batches in order (a short tail is dropped), produced on a
    background thread a few chunks ahead of the simulation (:func:`read_ahead`); ``ids_only``:
    for a run that counts, which reads no labels or dense features."""
    for chunk in read_ahead(trace.chunks(global_batch * _BATCHES_PER_CHUNK, ids_only)):
        for offset in range(0, len(chunk) - global_batch + 1, global_batch):
            yield chunk.slice(offset, offset + global_batch)


def _validate(trace, scheduler, cache_rows, policy, consistency) -> None:
    if policy not in POLICIES:
        raise SpecError(f"cache policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if consistency not in ("strict", "optimistic"):
        raise SpecError(f"consistency must be 'strict' or 'optimistic', got {consistency!r}")
    working_set = scheduler.batch_size * trace.layout.ids_per_sample
    if cache_rows < working_set:
        raise CapacityError(
            f"a cache of {cache_rows:,} rows cannot hold one worker's ids of one iteration "
            f"(batch_size {scheduler.batch_size} × {trace.layout.ids_per_sample} ids a sample = "
            f"{working_set:,}); use at least {working_set:,} rows"
        )
    if trace.num_samples // scheduler.global_batch * scheduler.workers >= 2**31 - 1:
        raise CapacityError("too many iterations × workers for the simulator's int32 markers")


def _check_partition(assign: np.ndarray, workers: int, m: int, iteration: int) -> None:
    loads = np.bincount(assign, minlength=workers)
    if loads.shape[0] != workers or (loads != m).any():
        raise InvariantViolation(f"iteration {iteration}: worker loads {loads.tolist()} != {m}")


def _check_state(s: ClusterState, iteration: int) -> None:
    occupancy = np.array(
        [np.count_nonzero(s.cached & s.cached.dtype.type(1 << w)) for w in range(s.workers)]
    )
    if (occupancy != s.occupancy).any():
        raise InvariantViolation(f"iteration {iteration}: occupancy {s.occupancy} != {occupancy}")
    if (occupancy > s.capacity).any():
        raise InvariantViolation(f"iteration {iteration}: occupancy {occupancy} > {s.capacity}")
    if (s.valid & ~s.cached).any():
        raise InvariantViolation(f"iteration {iteration}: a valid copy is not cached")
