"""Partition rules shared by several schedulers.

Modelling assumptions: the random partition is a fresh seeded permutation of every global batch
(Herald's "random input partition"), so naive and the sync-only ablation see identical
partitions for the same seed. The location-aware partition is Herald's released ``LaiaScheduler``
(Herald's ``laia_scheduler.cc``, ``get_dist``): static scores from the cache state before the batch, samples placed
greedily in batch order, hard balance of exactly m samples per worker.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["contiguous_partition", "location_aware_partition", "random_partition"]


def random_partition(global_batch: int, batch_size: int, seed: int, iteration: int) -> np.ndarray:
    """Worker of each sample: position p of a seeded permutation goes to worker p // m."""
    perm = np.random.default_rng([seed, iteration]).permutation(global_batch)
    assign = np.empty(global_batch, dtype=np.int32)
    assign[perm] = np.arange(global_batch, dtype=np.int32) // batch_size
    return assign


def contiguous_partition(global_batch: int, batch_size: int) -> np.ndarray:
    """Worker of each sample: samples ``[w·m, (w+1)·m)`` of the batch go to worker w (BagPipe's
    released oracle slices the batch this way for its trainers)."""
    return np.arange(global_batch, dtype=np.int32) // batch_size


def location_aware_partition(
    ids: np.ndarray, valid: np.ndarray, workers: int, batch_size: int, iteration: int
) -> np.ndarray:
    """Herald's greedy, balanced, location-aware assignment of one global batch. A sample's
    score counts each id it reads, as often as it reads it; a negative id is a pad of a ragged
    table (:attr:`CacheView.counted_ids`) and counts nothing."""
    return _greedy_by_score(ids, valid, workers, batch_size, iteration % workers)


@numba.njit(cache=True, nogil=True)
def _greedy_by_score(ids, valid, workers, batch_size, rotation):  # pragma: no cover - numba
    n, fields = ids.shape
    assign = np.empty(n, dtype=np.int32)
    load = np.zeros(workers, dtype=np.int64)
    score = np.zeros(workers, dtype=np.int64)
    spread = _spread_table(workers, fields)
    for i in range(n):
        packed = np.uint64(0)
        for f in range(fields):
            k = ids[i, f]
            if k < 0:  # a pad of a ragged table (data.ragged.PAD): not an id the sample reads
                continue
            packed = _add_mask(packed, score, valid[k], spread, workers)
        best = _pick(packed, score, load, batch_size, rotation, workers, spread, False)
        assign[i] = best
        load[best] += 1
    return assign


def affinity_partition(
    ids: np.ndarray,
    valid: np.ndarray,
    claims: np.ndarray,
    freq: np.ndarray,
    workers: int,
    batch_size: int,
    iteration: int,
    shared_limit: int,
) -> np.ndarray:
    """Location-aware partition that also co-locates samples sharing ids within the batch.

    A sample scores, for each worker, its ids valid there (Herald's score) plus its ids already
    claimed there by earlier samples of the same batch; ties go to the least loaded worker, so
    that workers keep room for the samples that will want them later in the batch. Co-locating the readers of a row means
    one pull instead of several, and a single writer instead of co-writers, whose partial copies
    would each need a push (strict consistency). Only ids read by at most ``shared_limit``
    samples of the batch are claimed: a row read by many more samples than one worker takes is
    spread over several workers anyway, and claiming it would pull whole runs of samples onto one
    worker regardless of where their other ids live. ``claims`` and ``freq`` are per-row scratch,
    all zero on entry and on return.
    """
    return _greedy_with_claims(
        ids, valid, claims, freq, workers, batch_size, iteration % workers, shared_limit
    )


@numba.njit(cache=True, nogil=True)
def _greedy_with_claims(ids, valid, claims, freq, workers, batch_size, rotation,
                        shared_limit):  # pragma: no cover - numba
    n, fields = ids.shape
    for i in range(n):
        for f in range(fields):
            if ids[i, f] >= 0:  # not a pad of a ragged table
                freq[ids[i, f]] += 1
    assign = np.empty(n, dtype=np.int32)
    load = np.zeros(workers, dtype=np.int64)
    score = np.zeros(workers, dtype=np.int64)
    spread = _spread_table(workers, fields)
    # Branch-free: whether a row is read by more than shared_limit samples (and so not claimed)
    # is a coin toss; ``claimable`` is all bits or none instead (measured: a quarter faster).
    zero = claims.dtype.type(0)
    for i in range(n):
        packed = np.uint64(0)
        for f in range(fields):
            k = ids[i, f]
            if k < 0:
                continue
            claimable = zero - claims.dtype.type(freq[k] <= shared_limit)
            packed = _add_mask(packed, score, valid[k] | (claims[k] & claimable), spread, workers)
        best = _pick(packed, score, load, batch_size, rotation, workers, spread, True)
        assign[i] = best
        load[best] += 1
        bit = claims.dtype.type(1 << best)
        for f in range(fields):
            k = ids[i, f]
            if k < 0:
                continue
            claimable = zero - claims.dtype.type(freq[k] <= shared_limit)
            claims[k] = claims[k] | (bit & claimable)
    for i in range(n):
        for f in range(fields):
            k = ids[i, f]
            if k >= 0:
                claims[k] = 0
                freq[k] = 0
    return assign


#: SPREAD[m] has byte w equal to bit w of m: summing SPREAD[mask] over a sample's ids counts, for
#: eight workers at once, its ids whose mask has each worker's bit (at most 255 ids a sample).
_SPREAD = np.array([sum(((m >> w) & 1) << (8 * w) for w in range(8)) for m in range(256)],
                   dtype=np.uint64)
_NO_SPREAD = np.zeros(0, dtype=np.uint64)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _spread_table(workers, fields):  # pragma: no cover - numba
    """The byte-per-worker table where it applies (up to 8 workers, 255 ids), else empty."""
    return _SPREAD if workers <= 8 and fields <= 255 else _NO_SPREAD


@numba.njit(cache=True, nogil=True, inline="always")
def _add_mask(packed, score, mask, spread, workers):  # pragma: no cover - numba
    """One id's mask added to the sample's scores: a byte per worker in ``packed`` when
    ``spread`` applies, else one counter per worker in ``score``."""
    if spread.shape[0] > 0:
        return packed + spread[mask]
    _add_bits(score, np.int64(mask), workers)
    return packed


@numba.njit(cache=True, nogil=True, inline="always")
def _pick(packed, score, load, batch_size, rotation, workers, spread,
          fewest_loaded):  # pragma: no cover - numba
    """The worker with room and the highest score, checked from ``rotation`` on, first wins a
    tie or, with ``fewest_loaded``, the least loaded. Resets ``score``. Branch-free: the
    comparisons are unpredictable."""
    best = 0
    best_key = np.int64(-1)
    w = rotation
    for _ in range(workers):
        if spread.shape[0] > 0:
            value = np.int64((packed >> np.uint64(8 * w)) & np.uint64(255))
        else:
            value = score[w]
            score[w] = 0
        room = batch_size - load[w]
        key = (value << 32) + (room if fewest_loaded else 0) if room > 0 else np.int64(-1)
        better = key > best_key
        best = w if better else best
        best_key = key if better else best_key
        w = w + 1 if w + 1 < workers else 0
    return best


@numba.njit(cache=True, nogil=True, inline="always")
def _add_bits(score, mask, workers):  # pragma: no cover - numba
    """score[w] += bit w of mask, for every worker (branch-free: the bits are unpredictable)."""
    for w in range(workers):
        score[w] += (mask >> w) & 1
