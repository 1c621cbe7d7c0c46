"""numba kernels of the executor's host-side bookkeeping: one pass each, duplicates summed.

The PS table and every per-row and per-slot counter live in host memory; numpy's fancy-index
scatters need several passes (and ``np.add.at`` is slow), torch's multi-threaded index kernels on
a large host tensor contend with the model's threads. These loops are memory-bound single passes.
"""

from __future__ import annotations

import numba

__all__ = ["add_at", "gather_inverse", "load_rows", "scatter_add_rows", "sgd_rows", "write_back"]


@numba.njit(cache=True, nogil=True)
def scatter_add_rows(table, rows, values):  # pragma: no cover - numba
    """``table[rows[i]] += values[i]`` for every i; repeated rows add up (co-writers' shares)."""
    dim = table.shape[1]
    for i in range(rows.shape[0]):
        k = rows[i]
        for d in range(dim):
            table[k, d] += values[i, d]


@numba.njit(cache=True, nogil=True)
def add_at(counts, rows, amounts):  # pragma: no cover - numba
    """``counts[rows[i]] += amounts[i]`` (``amounts`` of length 1 adds that to every row)."""
    one = amounts.shape[0] == 1
    for i in range(rows.shape[0]):
        counts[rows[i]] += amounts[0] if one else amounts[i]


@numba.njit(cache=True, nogil=True)
def gather_inverse(ids, assign, slot_of, pos_of_slot, inverse):  # pragma: no cover - numba
    """``inverse[s, f]`` = position, among the rows read, of the copy sample s reads for field f:
    ``pos_of_slot[slot_of[assign[s], ids[s, f]]]``."""
    for s in range(ids.shape[0]):
        w = assign[s]
        for f in range(ids.shape[1]):
            inverse[s, f] = pos_of_slot[slot_of[w, ids[s, f]]]


@numba.njit(cache=True, nogil=True)
def load_rows(cache, delta, slots, table, rows, keep_delta):  # pragma: no cover - numba
    """``cache[slots[i]] = table[rows[i]] (+ delta[slots[i]])``: pulls into host caches."""
    dim = cache.shape[1]
    for i in range(slots.shape[0]):
        s, k = slots[i], rows[i]
        for d in range(dim):
            cache[s, d] = table[k, d] + delta[s, d] if keep_delta else table[k, d]


@numba.njit(cache=True, nogil=True)
def write_back(table, rows, delta, slots):  # pragma: no cover - numba
    """``table[rows[i]] += delta[slots[i]]; delta[slots[i]] = 0`` (repeated rows add up)."""
    dim = table.shape[1]
    for i in range(slots.shape[0]):
        s, k = slots[i], rows[i]
        for d in range(dim):
            table[k, d] += delta[s, d]
            delta[s, d] = 0.0


@numba.njit(cache=True, nogil=True)
def sgd_rows(cache, delta, slots, inverse, sample_grad, lr, buffer):  # pragma: no cover - numba
    """SGD on the copies read: sum each copy's gradient over the batch (``buffer``, (U, D)),
    then ``cache -= lr·g`` and ``delta -= lr·g`` on slot ``slots[u]``."""
    buffer[:] = 0.0
    dim = buffer.shape[1]
    for i in range(inverse.shape[0]):
        u = inverse[i]
        for d in range(dim):
            buffer[u, d] += sample_grad[i, d]
    for u in range(slots.shape[0]):
        s = slots[u]
        for d in range(dim):
            step = -lr * buffer[u, d]
            cache[s, d] += step
            delta[s, d] += step
