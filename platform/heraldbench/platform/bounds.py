"""Communication lower bound of a fixed partition (docs/semantics.md, "Totals").

Given the partition a scheduler produced, no strict, demand-fetching scheduler that runs it (the
caches of K rows per worker, LRU or any other policy, any sync rule) moves fewer rows than:

* **pulls** = Σ_w MIN(renamed stream of w, K). Worker w reads ``U_w(b)``, its distinct rows of
  iteration b. Its copy of row r stays usable from one read to the next only if r's accesses in
  between are w's alone: any other worker's write in [w's previous read, now), including a
  co-write in the iteration of that previous read, makes the copy outdated (strict
  consistency). Renaming each read to (r, epoch), the epoch advancing at every such break,
  turns the worker's cache into plain paging, whose optimum is Belady's MIN
  (:mod:`heraldbench.platform._belady` argues why at iteration granularity). Split as
  compulsory (first read of (w, r)) + coherence (a new epoch) + capacity misses.
* **pushes** = #{(b, w, r): w writes r at b and the PS must hold that update before some read}.
  With b' the next iteration in which *anyone* reads r: if w wrote r alone at b, the update is
  needed iff a worker other than w reads r at b' (then that worker's copy is outdated and it
  pulls, and b' ≤ w's next read; if only w reads r at b', w keeps accumulating locally). If w
  co-wrote r at b, every copy is partial, so whoever reads r at b' (w included) pulls, and
  every co-writer's share must reach the PS first. The push of (b, w, r) happens between the
  writes of b and the reads of b'; these windows are disjoint for one (w, r), so each counted
  item is a distinct push: ``pushes ≤ evict_push + update_push`` of every such run.
* **flush** = updates made at r's last iteration: each of its writers still holds an unpushed
  update the PS must receive at the end. These are exactly the (w, r) whose last write needs no
  push (a later read of r by anyone would need it). A scheduler moves them either as
  pushes after that iteration or as its flush, so ``pushes + flush ≤ push + flush_push``.

The two bounds may not be reachable together with a finite cache: MIN's evictions ignore dirty
write-backs (jointly optimal caching with write-backs is NP-hard, as offline paging with write-back costs is).
Outside the model (they relax or replace the strict per-worker caches): HET's bounded staleness,
direct worker-to-worker transfers, FAE's replicated hot batches, BagPipe's logically shared cache.

Cost: one pass over the trace builds the *row-iteration table* (one entry per iteration and
distinct row read in it, with the bitmask of its readers), a backward pass links each entry to
the row's next entry (the pushes and each access's next use), and MIN runs per worker (in
parallel) with a lazy-deletion heap. Memory: 4 + mask bytes (1 at W ≤ 8, up to 8 at W ≤ 64) per
raw id access for the table, 4 per entry for next uses, 24 bytes per row while building and 5
bytes per row plus an O(K) heap per MIN thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from heraldbench.platform import _belady
from heraldbench.platform.data import TraceSource
from heraldbench.platform.exceptions import CapacityError, SpecError
from heraldbench.platform.metrics import Counts

__all__ = ["LowerBound", "lower_bound"]

_BATCHES_PER_CHUNK = 64


@dataclass(frozen=True)
class LowerBound:
    """Row transfers no strict scheduler running a given partition can go below.

    Attributes:
        pulls: minimum pulls (Belady's MIN on the version-renamed streams).
        pushes: pushes that must happen before some read (flush excluded).
        flush: updates still to reach the PS at the end (compare with ``flush_push``).
        compulsory_pulls: first reads of a row by a worker (part of ``pulls``).
        coherence_pulls: reads of a copy another worker's write made outdated (part of ``pulls``).
    """

    pulls: int
    pushes: int
    flush: int
    compulsory_pulls: int
    coherence_pulls: int

    @property
    def capacity_pulls(self) -> int:
        """Pulls MIN still pays because the cache holds only K rows."""
        return self.pulls - self.compulsory_pulls - self.coherence_pulls

    @property
    def overall(self) -> int:
        return self.pulls + self.pushes

    def gap(self, counts: Counts) -> dict[str, float | None]:
        """A scheduler's counts over the bound, per total (None where the bound is 0).

        ``push`` compares ``counts.push`` (evict + update pushes) with ``pushes``; both leave the
        final flush out, and ``overall`` is pull + push (+ all-reduce) over pulls + pushes.
        """
        return {
            "pull": _ratio(counts.pull, self.pulls),
            "push": _ratio(counts.push, self.pushes),
            "overall": _ratio(counts.overall, self.overall),
        }


def _ratio(value: float, bound: int) -> float | None:
    return None if bound == 0 else value / bound


def lower_bound(
    trace: TraceSource,
    partitions: np.ndarray,
    *,
    workers: int,
    batch_size: int,
    cache_rows: int,
) -> LowerBound:
    """The pull and push lower bounds of running ``partitions`` over ``trace`` (strict mode).

    Args:
        trace: the trace the scheduler ran on (``scheduler.plan_run(trace).trace``; the same
            trace for every scheduler without its own sample order).
        partitions: (iterations, workers·batch_size) worker of each sample of each global
            batch, as ``simulate(..., record_partitions=True)`` records it; iteration b covers
            samples [b·B, (b + 1)·B). Only these iterations are counted.
        workers: W.
        batch_size: m, samples per worker per iteration.
        cache_rows: K, rows per worker cache; at least m·F.

    Raises:
        SpecError: the partition does not fit the trace or does not give each worker m samples.
        CapacityError: K < m·F.
    """
    parts = _checked_partitions(trace, partitions, workers, batch_size)
    working_set = batch_size * trace.layout.ids_per_sample
    if cache_rows < working_set:
        raise CapacityError(f"cache_rows {cache_rows:,} < batch_size × fields = {working_set:,}")
    num_rows = trace.layout.total_rows
    rows, masks, starts = _row_iteration_table(trace, parts, workers)
    next_use = np.empty(rows.shape[0], np.int32)
    pushes, flush = _link(rows, masks, starts, num_rows, next_use)
    misses = _belady.min_misses(
        rows, masks, next_use, starts, workers=workers, num_rows=num_rows, capacity=cache_rows
    ).sum(axis=0)
    return LowerBound(
        pulls=int(misses[0]),
        pushes=int(pushes),
        flush=int(flush),
        compulsory_pulls=int(misses[1]),
        coherence_pulls=int(misses[2]),
    )


def _checked_partitions(
    trace: TraceSource, partitions: np.ndarray, workers: int, batch_size: int
) -> np.ndarray:
    if not 1 <= workers <= 64:
        raise SpecError(f"workers must be between 1 and 64, got {workers}")
    if batch_size < 1:
        raise SpecError(f"batch_size must be >= 1, got {batch_size}")
    parts = np.asarray(partitions)
    global_batch = workers * batch_size
    if parts.ndim != 2 or parts.shape[1] != global_batch or parts.dtype.kind not in "iu":
        raise SpecError(
            f"partitions must be integers of shape (iterations, {global_batch}), "
            f"got {parts.dtype} {parts.shape}"
        )
    if parts.shape[0] > trace.num_samples // global_batch:
        raise SpecError(
            f"{parts.shape[0]} iterations but the trace holds only "
            f"{trace.num_samples // global_batch} global batches of {global_batch}"
        )
    if parts.size and (parts.min() < 0 or parts.max() >= workers):
        raise SpecError(f"partition entries must lie in [0, {workers})")
    per_iteration = np.arange(parts.shape[0])[:, None] * workers + parts
    loads = np.bincount(per_iteration.ravel(), minlength=parts.shape[0] * workers)
    if (loads != batch_size).any():
        b = int(np.flatnonzero(loads != batch_size)[0]) // workers
        raise SpecError(f"iteration {b}: worker loads {loads.reshape(-1, workers)[b].tolist()} "
                        f"!= {batch_size}")
    return np.ascontiguousarray(parts, dtype=np.int8)


def _mask_dtype(workers: int) -> type[np.unsignedinteger]:
    """The narrowest unsigned type with a bit per worker."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if workers <= np.iinfo(dtype).bits:
            return dtype
    return np.uint64


def _row_iteration_table(
    trace: TraceSource, parts: np.ndarray, workers: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per iteration, the distinct rows read and the bitmask of their readers.

    Returns (rows, masks, starts): iteration b's entries are ``starts[b]:starts[b + 1]``, rows
    in first-touch order within the iteration.
    """
    iterations, global_batch = parts.shape
    most = iterations * global_batch * trace.layout.ids_per_sample
    rows = np.empty(most, np.int32)
    masks = np.empty(most, _mask_dtype(workers))
    starts = np.zeros(iterations + 1, np.int64)
    stamp = np.full(trace.layout.total_rows, -1, np.int32)  # last iteration that read the row
    slot = np.empty(trace.layout.total_rows, np.int64)  # its entry in that iteration
    done = filled = 0
    for chunk in trace.chunks(global_batch * _BATCHES_PER_CHUNK):
        batches = min(len(chunk) // global_batch, iterations - done)
        if batches <= 0:
            break
        filled = _collect(
            chunk.ids[: batches * global_batch], parts[done : done + batches], done, filled,
            stamp, slot, rows, masks, starts,
        )  # fmt: skip
        done += batches
    return rows[:filled].copy(), masks[:filled].copy(), starts  # release the spare room


@numba.njit(cache=True)
def _collect(ids, parts, first, filled, stamp, slot, rows, masks,
             starts):  # pragma: no cover - numba
    """Append the row-iteration entries of consecutive global batches; returns the new fill."""
    global_batch = parts.shape[1]
    for j in range(parts.shape[0]):
        b = first + j
        for i in range(global_batch):
            bit = np.uint64(1) << np.uint64(parts[j, i])
            sample = j * global_batch + i
            for f in range(ids.shape[1]):
                r = ids[sample, f]
                if stamp[r] != b:
                    stamp[r] = b
                    slot[r] = filled
                    rows[filled] = r
                    masks[filled] = 0
                    filled += 1
                masks[slot[r]] = np.uint64(masks[slot[r]]) | bit
        starts[b + 1] = filled
    return filled


@numba.njit(cache=True)
def _link(rows, masks, starts, num_rows, next_use):  # pragma: no cover - numba
    """Backward pass: pushes, flush, and each entry's next use for MIN.

    With m the readers of an entry (iteration b) and m' those of the row's next entry (b'):
    a lone writer w must push iff m' holds another worker, and its key lives on to b' iff
    w is in m'; co-writers must all push if b' exists, and their keys die. Without b', every
    writer's update is flushed.
    """
    later_b = np.full(num_rows, _belady.NEVER, np.int32)
    later_mask = np.zeros(num_rows, np.uint64)
    pushes = 0
    flush = 0
    for b in range(starts.shape[0] - 2, -1, -1):
        for e in range(starts[b + 1] - 1, starts[b] - 1, -1):
            r = rows[e]
            m = np.uint64(masks[e])
            later = later_mask[r]
            alone = (m & (m - np.uint64(1))) == 0
            next_use[e] = _belady.NEVER
            if later == 0:
                flush += _popcount(m)
            elif not alone:
                pushes += _popcount(m)
            else:
                if later & ~m:
                    pushes += 1
                if later & m:
                    next_use[e] = later_b[r]
            later_b[r] = b
            later_mask[r] = m
    return pushes, flush


@numba.njit(cache=True, inline="always")
def _popcount(mask):  # pragma: no cover - numba
    count = 0
    while mask:
        mask &= mask - np.uint64(1)
        count += 1
    return count
