"""The sequential path of the profile-driven generator: plan each sample AHEAD samples early,
then build it (the decisions themselves are :mod:`._kernels`'; the same ids as its random access).

Planning a sample decides every source it copies with arithmetic on its position alone, so the
rows it names are prefetched while earlier samples are built; a block's head tuple drawn given
its parent's reuses the parent's draw at the same sample (:func:`_plan_heads`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from heraldbench.platform.data.workload._kernels import (
    _SLOT,
    _block_bits,
    _given_draw,
    _head_by,
    _head_tuple,
    _new_value,
    _octave,
    _own_head_tuple,
    _own_value,
    _repeat_source,
    _root_sources,
    _search,
    _stream,
    _tau,
    _uniform,
    value_at,
)
from heraldbench.platform.data.workload._prefetch import prefetch

__all__ = ["AHEAD", "fill_block_ids", "fill_ids", "plan_shape"]

#: Samples planned ahead of the one being built: the rows they copy are prefetched meanwhile.
AHEAD = 8
#: Rows of the plan (a power of two above AHEAD); columns: see :func:`plan_shape`.
PLAN_ROWS = 16
_NEVER = np.int64(1) << 62


#: A planned block's source when it draws a head tuple by its head coin (-1: none found).
_HEAD_DRAW = np.int64(-2)
#: The plan's row of each block's head tuple at the sample being built (-1: none by its coin).
_HEADS_ROW = PLAN_ROWS


def plan_shape(blocks: int, fields: int) -> tuple[int, int]:
    """Scratch the sequential path needs: per planned sample, each block's new tuple (or -1) and
    source (or -1, or _HEAD_DRAW), then each field's value in a new tuple (a copy from sample s
    as -2 - s); the head tuples of the sample being built; each block's next slot and its
    sample."""
    return PLAN_ROWS + 3, 2 * blocks + fields


@numba.njit(cache=True, inline="always", _nrt=False)
def _copied(t, source, f, ring, kern, scratch):  # pragma: no cover - numba
    """Field f of an earlier sample: from the ring if it holds it, else computed."""
    if t - source < ring.shape[0]:
        return ring[source & (ring.shape[0] - 1), f]
    return value_at(source, f, kern, scratch)


@numba.njit(cache=True, inline="always", _nrt=False)
def _prefetch_block(ring, s, k, kern):  # pragma: no cover - numba
    """Start loading the lines of sample s's ring row that hold block k's fields."""
    row = s & (ring.shape[0] - 1)
    for p in range(kern.block_start[k], kern.block_start[k + 1]):
        prefetch(ring, row, kern.block_fields[p])


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _slot_sample(q, curve, slope, key, jitter):  # pragma: no cover - numba
    """The sample whose interval holds slot q's point (inverse of :func:`_slot`; _NEVER when the
    curve never reaches it)."""
    point = q + jitter * _uniform(key, q)
    if point < curve[0]:
        return np.int64(0)
    top = curve.shape[0] - 1
    if point >= curve[top]:
        return _NEVER
    i = _search(curve, 0, top + 1, point) - 1  # curve[i] <= point < curve[i + 1]
    while curve[i + 1] <= point:
        i += 1
    t = (np.int64(1) << i) + np.int64((point - curve[i]) / slope[i]) if slope[i] > 0 else np.int64(1) << i
    while t > 0 and _tau(t, _octave(t), curve, slope) > point:
        t -= 1
    while _tau(t + 1, _octave(t + 1), curve, slope) <= point:
        t += 1
    return t


@numba.njit(cache=True, inline="always", _nrt=False)
def _next_slot(k, q, kern, plan):  # pragma: no cover - numba
    """Store block k's slot q and its sample as the block's next new tuple."""
    state = plan.shape[0] - 2
    plan[state, k] = q
    plan[state + 1, k] = _slot_sample(q, kern.block_curve[k], kern.block_slope[k],
                                      _stream(kern, _SLOT, k), kern.block_jitter[k])  # fmt: skip


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _start_slots(start, kern, plan):  # pragma: no cover - numba
    """Each block's first new tuple at or after ``start``."""
    state = plan.shape[0] - 2
    for k in range(kern.block_start.shape[0] - 1):
        q = np.int64(math.floor(_tau(start, _octave(start), kern.block_curve[k],
                                     kern.block_slope[k]))) if start > 0 else np.int64(0)  # fmt: skip
        q = max(q - 1, np.int64(0))
        _next_slot(k, q, kern, plan)
        while plan[state + 1, k] < start:
            _next_slot(k, plan[state, k] + 1, kern, plan)


@numba.njit(cache=True, inline="always", _nrt=False)
def _plan_new_tuple(u, j, k, kern, ring, plan, row):  # pragma: no cover - numba
    """Block k's fields in its new tuple j at u: values, or the samples to copy (prefetched)."""
    blocks = kern.block_start.shape[0] - 1
    for p in range(kern.block_start[k], kern.block_start[k + 1]):
        f = kern.block_fields[p]
        value, source = _new_value(u, j, f, k, kern)
        if source >= 0:
            prefetch(ring, source & (ring.shape[0] - 1), f)
            value = -2 - source
        plan[row, 2 * blocks + f] = value


@numba.njit(cache=True, inline="always", _nrt=False)
def _plan_sample(u, kern, ring, roots, plan, first_block, end_block):  # pragma: no cover
    """Decide every source of sample u (blocks first_block..end_block), store them in the plan,
    and prefetch the rows they name: all of it is arithmetic on u, no read of the ring."""
    row = u & (PLAN_ROWS - 1)
    state = plan.shape[0] - 2
    _root_sources(u, kern, roots)
    for k in range(first_block, end_block):
        j = np.int64(-1)
        if plan[state + 1, k] == u:
            j = plan[state, k]
            _next_slot(k, j + 1, kern, plan)
        source = np.int64(-1)
        if j >= 0:
            _plan_new_tuple(u, j, k, kern, ring, plan, row)
        else:
            bits = _block_bits(u, k, kern)
            if not _head_by(bits, u, k, kern):
                source = _repeat_source(u, k, bits, kern, roots)
                if source >= 0:
                    _prefetch_block(ring, source, k, kern)
            else:
                source = _HEAD_DRAW
        plan[row, 2 * k] = j
        plan[row, 2 * k + 1] = source


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _plan_heads(t, row, kern, plan, first_block, end_block):  # pragma: no cover - numba
    """The head tuple of each block drawing one by its coin at t, parents first, each child
    given its parent's draw when the parent is made here (else recomputed: another thread
    makes it): what :func:`_head_tuple` gives, without recomputing a parent's draw."""
    for q in range(kern.head_order.shape[0]):
        k = kern.head_order[q]
        if k < first_block or k >= end_block:
            continue
        h = np.int64(-1)
        if plan[row, 2 * k + 1] == _HEAD_DRAW:  # set only where the block brings no new tuple
            p = kern.given_parent[k]
            if p < 0:
                h = _own_head_tuple(t, k, kern)
            elif first_block <= p < end_block:
                h = _given_draw(t, k, plan[_HEADS_ROW, p], kern)
            else:
                h = _head_tuple(t, k, kern)
        plan[_HEADS_ROW, k] = h


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _put(out, i, ring, ring_row, f, value, offsets):  # pragma: no cover - numba
    """Field f of the sample being built: table-local in the ring, global in ``out``."""
    ring[ring_row, f] = value
    out[i, f] = value + offsets[f]


def fill_ids(start, out, ring, kern, roots, scratch, plan, offsets) -> None:
    """Samples [start, start + len(out)) into ``out``, in order: the same ids as
    :func:`._kernels.value_at` plus each field's ``offsets`` (zeros: table-local ids; a
    layout's offsets: global ones), faster.

    ``ring`` (a power of two rows of at least F int32) must hold the samples just before
    ``start``, as left by the previous call; a copy from further back is computed with
    :func:`._kernels.value_at`. ``roots`` and ``scratch`` hold one entry per root level;
    ``plan`` has :func:`plan_shape`.

    Every block at once, through :func:`fill_block_ids`: one compiled kernel for both paths
    rather than a second copy specialised to all blocks, which cost a fresh checkout as long a
    compile as the other (tens of seconds) for a loop a few percent faster.
    """
    fill_block_ids(start, out, ring, kern, roots, scratch, plan, offsets, 0,
                   kern.block_start.shape[0] - 1)  # fmt: skip


@numba.njit(cache=True, nogil=True, _nrt=False)
def fill_block_ids(
    start, out, ring, kern, roots, scratch, plan, offsets, first_block, end_block
):  # pragma: no cover - numba
    """:func:`fill_ids` for the fields of blocks ``first_block..end_block`` alone: a block copies
    only its own fields from earlier samples, and every other decision is a hash of the
    position, so disjoint ranges of blocks can be made at once by several threads, each with
    its own ring and plan (the other fields of ``out`` are left as they were). Its ring holds
    those blocks' fields of the samples before ``start``."""
    mask = ring.shape[0] - 1
    blocks = kern.block_start.shape[0] - 1
    linked = kern.head_order.shape[0] > 0  # some block's head tuples are given another's
    _start_slots(start, kern, plan)
    # One loop from AHEAD samples before the first: _plan_sample, inlined, is compiled once.
    for i in range(-AHEAD, out.shape[0]):
        if i + AHEAD < out.shape[0]:
            _plan_sample(start + i + AHEAD, kern, ring, roots, plan, first_block, end_block)
        if i < 0:
            continue
        t = start + i
        row = t & (PLAN_ROWS - 1)
        ring_row = t & mask  # written as the sample is built: every source is an earlier row
        if linked:
            _plan_heads(t, row, kern, plan, first_block, end_block)
        for k in range(first_block, end_block):
            lo, hi = kern.block_start[k], kern.block_start[k + 1]
            if plan[row, 2 * k] >= 0:
                for p in range(lo, hi):
                    f = kern.block_fields[p]
                    value = plan[row, 2 * blocks + f]
                    value = value if value >= 0 else _copied(t, -2 - value, f, ring, kern, scratch)
                    _put(out, i, ring, ring_row, f, value, offsets)
                continue
            source = plan[row, 2 * k + 1]
            if source >= 0:
                for p in range(lo, hi):
                    f = kern.block_fields[p]
                    _put(out, i, ring, ring_row, f, _copied(t, source, f, ring, kern, scratch),
                         offsets)
                continue
            if not linked:
                h = _own_head_tuple(t, k, kern)
            elif source == _HEAD_DRAW:
                h = plan[_HEADS_ROW, k]  # made by _plan_heads
            else:
                h = _head_tuple(t, k, kern)
            for p in range(lo, hi):
                f = kern.block_fields[p]
                value = kern.tuple_ranks[h, kern.position[f]] if h >= 0 else _own_value(t, f, kern)
                _put(out, i, ring, ring_row, f, value, offsets)
