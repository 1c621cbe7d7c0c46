"""Partition rules shared by several schedulers.

Modelling assumptions: the random partition is a fresh seeded permutation of every global batch
(the "random input partition" of DESIGN §1), so naive and the sync-only ablation see identical
partitions for the same seed. The location-aware partition is Herald's released ``LaiaScheduler``
(research/schedulers.md §1.2): static scores from the cache state before the batch, samples placed
greedily in batch order, hard balance of exactly m samples per worker.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["location_aware_partition", "random_partition"]


def random_partition(global_batch: int, batch_size: int, seed: int, iteration: int) -> np.ndarray:
    """Worker of each sample: position p of a seeded permutation goes to worker p // m."""
    perm = np.random.default_rng([seed, iteration]).permutation(global_batch)
    assign = np.empty(global_batch, dtype=np.int32)
    assign[perm] = np.arange(global_batch, dtype=np.int32) // batch_size
    return assign


def location_aware_partition(
    ids: np.ndarray, valid: np.ndarray, workers: int, batch_size: int, iteration: int
) -> np.ndarray:
    """Herald's greedy, balanced, location-aware assignment of one global batch."""
    return _greedy_by_score(ids, valid, workers, batch_size, iteration % workers)


@numba.njit(cache=True, nogil=True)
def _greedy_by_score(ids, valid, workers, batch_size, rotation):  # pragma: no cover - numba
    n, fields = ids.shape
    assign = np.empty(n, dtype=np.int32)
    load = np.zeros(workers, dtype=np.int64)
    score = np.zeros(workers, dtype=np.int64)
    for i in range(n):
        score[:] = 0
        for f in range(fields):
            _add_bits(score, np.int64(valid[ids[i, f]]), workers)
        best = -1
        best_score = -1
        for j in range(workers):
            w = (j + rotation) % workers
            if load[w] < batch_size and score[w] > best_score:
                best = w
                best_score = score[w]
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
            freq[ids[i, f]] += 1
    assign = np.empty(n, dtype=np.int32)
    load = np.zeros(workers, dtype=np.int64)
    score = np.zeros(workers, dtype=np.int64)
    for i in range(n):
        score[:] = 0
        for f in range(fields):
            k = ids[i, f]
            mask = np.int64(valid[k])
            if freq[k] <= shared_limit:
                mask |= np.int64(claims[k])
            _add_bits(score, mask, workers)
        best = -1
        for j in range(workers):
            w = (j + rotation) % workers
            if load[w] < batch_size and (
                best < 0
                or score[w] > score[best]
                or (score[w] == score[best] and load[w] < load[best])
            ):
                best = w
        assign[i] = best
        load[best] += 1
        bit = np.uint64(1) << np.uint64(best)
        for f in range(fields):
            k = ids[i, f]
            if freq[k] <= shared_limit:
                claims[k] = np.uint64(claims[k]) | bit
    for i in range(n):
        for f in range(fields):
            k = ids[i, f]
            claims[k] = 0
            freq[k] = 0
    return assign


@numba.njit(cache=True, nogil=True, inline="always")
def _add_bits(score, mask, workers):  # pragma: no cover - numba
    """score[w] += bit w of mask, for every worker (branch-free: the bits are unpredictable)."""
    for w in range(workers):
        score[w] += (mask >> w) & 1
