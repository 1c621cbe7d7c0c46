"""Numba kernels of the profile-driven generator (the model is described in :mod:`.model`).

Every decision is a counter-based random number: a hash of (seed key, position), so any sample can
be computed on its own (:func:`value_at`, random access) and the sequential path
(:mod:`._stream`), which reads recent samples from a ring instead of recomputing them, yields
exactly the same ids. Positions are sample indices for block decisions and new-tuple indices for
a field's new values.

Speed (generation runs on a second core and must keep up with the simulator): the
kernels run without numba's reference counting (``_nrt=False``; they allocate nothing), draw from
discrete laws with alias tables (one random number, no search), read growth curves through
precomputed slopes, and (in :mod:`._stream`) decide each sample's sources a few samples before
building it, so that the rows it copies are fetched meanwhile. Whether a candidate source drew a
head tuple is recomputed (two hashes), never read from memory: a rejected candidate then costs no
trip to memory at all.

Compile time (a fresh checkout compiles these once; numba caches them): numba inlines a
function marked ``inline="always"`` by rebuilding and re-typing its IR at every call site, nested
ones included, so its cost grows with every call site of every inlined callee. Only the
functions that take the ``Kernels`` tuple and run for most blocks of every sample, or for every
field of a new tuple, are marked (a call passes the tuple's every array; with none marked,
generation measured 13–23% slower). The larger, rarer ones (a source found by retries, a head
tuple drawn given its parent's, a sample's root sources) are compiled once each, like the small
leaves that take numbers and arrays, which LLVM inlines. Every kernel that only kernels call is
compiled without a Python entry point (``no_cpython_wrapper``): unpacking the tuple's arrays
from Python objects was most of its compiling.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros

__all__ = ["NEW_STREAMS", "fill_positions", "value_at"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S11, _S27, _S30, _S31, _S32 = (np.uint64(s) for s in (11, 27, 30, 31, 32))
_LOW32 = np.uint64(0xFFFFFFFF)
_INV53 = 1.0 / 9007199254740992.0
_INV32 = 1.0 / 4294967296.0
#: A repeat whose source sample is a head draw looks for another source this many times.
RETRIES = 8

# Key streams: each decision draws from its own stream (index into Kernels.keys).
(_ROOT_COIN, _ROOT_DISTANCE, _SLOT, _HEAD_COIN, _HEAD_PICK, _REPEAT_DISTANCE, _FIELD_SLOT,
 _OLD_COIN, _MARGINAL, _OLD_DISTANCE, _HEAD_GIVEN) = range(11)  # fmt: skip
NEW_STREAMS = 11
#: Root levels the packed coins serve (one hash gives the head coin and two follow coins).
MAX_ROOTS = 2


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _hash(key, x):  # pragma: no cover - numba
    z = (np.uint64(x) * _GOLDEN) ^ key
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _to_unit(r):  # pragma: no cover - numba
    return np.float64(r >> _S11) * _INV53


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _uniform(key, x):  # pragma: no cover - numba
    return _to_unit(_hash(key, x))


@numba.njit(cache=True, inline="always", _nrt=False)
def _stream(kern, stream, salt):  # pragma: no cover - numba
    return kern.keys[stream] ^ (np.uint64(salt) * _M2)


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _octave(x):  # pragma: no cover - numba
    """floor(log2(x)) for x >= 1."""
    return 63 - leading_zeros(np.int64(x))


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _tau(x, octave, curve, slope):  # pragma: no cover - numba
    """Cumulative count before position x, whose octave (floor(log2(x)), for x >= 1) is given:
    curve[i] at x = 2**i, linear in between, 0 at x = 0."""
    if x <= 0:
        return 0.0
    return curve[octave] + slope[octave] * (x - (np.int64(1) << octave))


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _slot(x, curve, slope, key, jitter):  # pragma: no cover - numba
    """The slot k whose point, at ``k + jitter * u_k`` on the cumulative scale, falls in
    position x's interval; -1 if none. Lossless while the count grows by at most ``1 - jitter``
    per position: two points are then never in one interval."""
    if x > 0:
        octave = _octave(x)
        a0 = _tau(x, octave, curve, slope)
        next_octave = octave if x + 1 < np.int64(2) << octave else octave + 1
        a1 = _tau(x + 1, next_octave, curve, slope)
    else:
        a0, a1 = 0.0, curve[0]
    k = np.int64(math.floor(a0))
    point = k + jitter * _uniform(key, k)
    if point < a0:
        k += 1
        point = k + jitter * _uniform(key, k)
    return k if point < a1 else np.int64(-1)


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _search(values, lo, hi, x):  # pragma: no cover - numba
    """First index i in [lo, hi) with values[i] > x (hi if none), for ascending values."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _alias(prob, alias, lo, hi, u):  # pragma: no cover - numba
    """An outcome in [lo, hi) of an alias table, from a uniform u in [0, 1)."""
    n = hi - lo
    x = u * n
    i = min(np.int64(x), n - 1)
    return lo + i if x - i < prob[lo + i] else alias[lo + i]


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _distance(cdf, prob, alias, r, limit):  # pragma: no cover - numba
    """A distance in [1, limit] from a log2-binned law, conditioned on not exceeding ``limit``
    (a source before the trace's start does not exist); 0 when the law has no mass there."""
    if limit < 1:
        return np.int64(0)
    bins = cdf.shape[0]
    u = np.float64(r & _LOW32) * _INV32
    b = _alias(prob, alias, np.int64(0), bins, u)
    top = min(_octave(limit), bins - 1)
    if b > top:  # redraw within [0, top]: the law conditioned on the distance fitting
        mass = cdf[top]
        if mass <= 0.0:
            return np.int64(0)
        b = 0
        while b < top and cdf[b] < u * mass:
            b += 1
    low = np.int64(1) << b
    width = low if b < top else limit - low + 1
    return low + np.int64(np.float64(r >> _S32) * _INV32 * width)


@numba.njit(cache=True, inline="always", _nrt=False)
def _new_tuple(t, k, kern):  # pragma: no cover - numba
    return _slot(t, kern.block_curve[k], kern.block_slope[k], _stream(kern, _SLOT, k),
                 kern.block_jitter[k])  # fmt: skip


_COIN_BITS = np.uint64(21)
_COIN_MASK = np.uint64((1 << 21) - 1)
_COIN_SCALE = 1.0 / (1 << 21)


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _coin(r, which):  # pragma: no cover - numba
    """The which-th of three 21-bit uniforms packed in the random bits r."""
    return np.float64((r >> (_COIN_BITS * np.uint64(which))) & _COIN_MASK) * _COIN_SCALE


@numba.njit(cache=True, inline="always", _nrt=False)
def _block_bits(t, k, kern):  # pragma: no cover - numba
    """Block k's coins at t: the head coin, then one follow coin per root level (two at most)."""
    return _hash(_stream(kern, _HEAD_COIN, k), t)


@numba.njit(cache=True, inline="always", _nrt=False)
def _head_by(bits, t, k, kern):  # pragma: no cover - numba
    """Whether block k, bringing no new tuple at t, draws a head tuple (``bits``: its coins at
    t). Head tuples take a fixed share of all samples, so their share of the others grows as
    new tuples thin out."""
    rate = kern.block_slope[k, _octave(t)] if t > 0 else kern.block_curve[k, 0]
    return _coin(bits, np.int64(0)) * (1.0 - min(rate, 0.999999)) < kern.head_share[k]


@numba.njit(cache=True, inline="always", _nrt=False)
def _head_coin(t, k, kern):  # pragma: no cover - numba
    return _head_by(_block_bits(t, k, kern), t, k, kern)


@numba.njit(cache=True, inline="always", _nrt=False)
def _head_at(s, k, kern):  # pragma: no cover - numba
    """Whether block k drew a head tuple at s (computed: cheaper than a trip to memory). The
    head coin comes first: one hash, and false for most samples."""
    return _head_coin(s, k, kern) and _new_tuple(s, k, kern) < 0


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _root_sources(t, kern, roots):  # pragma: no cover - numba
    """Each root level's source at t (-1: none) into ``roots``."""
    for lv in range(kern.root_rate.shape[0]):
        roots[lv] = -1
        if _uniform(_stream(kern, _ROOT_COIN, lv), t) < kern.root_rate[lv]:
            d = _distance(kern.root_cdf[lv], kern.root_prob[lv], kern.root_alias[lv],
                          _hash(_stream(kern, _ROOT_DISTANCE, lv), t), t)  # fmt: skip
            if d > 0:
                roots[lv] = t - d


@numba.njit(cache=True, inline="always", _nrt=False)
def _repeat_source(t, k, bits, kern, roots):  # pragma: no cover - numba
    """The earlier sample block k repeats at t: a root's source it follows, else its own; -1 if
    every candidate is a head draw (head draws are not entities and are not repeated).
    ``bits``: the block's coins at t; ``roots``: each root level's source at t."""
    for lv in range(roots.shape[0]):
        s = roots[lv]
        if s >= 0 and _coin(bits, 1 + lv) < kern.follow[lv, k] and not _head_at(s, k, kern):
            return s
    return _entity_source(t, k, np.int64(_REPEAT_DISTANCE), k, kern.repeat_cdf[k], kern.repeat_prob[k],
                          kern.repeat_alias[k], kern)  # fmt: skip


@numba.njit(cache=True, inline="always", _nrt=False)
def _old_source(t, f, k, kern):  # pragma: no cover - numba
    """The earlier sample whose value of field f a new tuple reuses (-1: none)."""
    return _entity_source(t, k, np.int64(_OLD_DISTANCE), f, kern.old_cdf[f], kern.old_prob[f],
                          kern.old_alias[f], kern)  # fmt: skip


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _entity_source(t, k, stream, index, cdf, prob, alias, kern):  # pragma: no cover
    """The first of up to RETRIES distances back (drawn from the law cdf/prob/alias, key stream
    ``stream``, ``index``) that lands on a sample where block k did not draw a head tuple; -1 if
    none, or once a draw finds no mass."""
    for attempt in range(RETRIES):
        r = _hash(_stream(kern, stream, index * RETRIES + attempt), t)
        d = _distance(cdf, prob, alias, r, t)
        if d == 0:
            return np.int64(-1)
        if not _head_at(t - d, k, kern):
            return t - d
    return np.int64(-1)


@numba.njit(cache=True, inline="always", _nrt=False)
def _own_value(t, f, kern):  # pragma: no cover - numba
    """Field f's value at t when nothing is copied: a head value, else its first new value."""
    lo, hi = kern.marginal_start[f], kern.marginal_start[f + 1]
    if hi == lo:
        return kern.head_rows[f]
    r = _hash(_stream(kern, _MARGINAL, f), t)
    return _alias(kern.marginal_prob, kern.marginal_alias, lo, hi, _to_unit(r)) - lo


@numba.njit(cache=True, inline="always", _nrt=False)
def _own_head_tuple(t, k, kern):  # pragma: no cover - numba
    """Row of ``tuple_ranks`` block k draws at t from its own law; -1 if it has no head tuples."""
    lo, hi = kern.tuple_start[k], kern.tuple_start[k + 1]
    if hi == lo:
        return np.int64(-1)
    r = _hash(_stream(kern, _HEAD_PICK, k), t)
    return _alias(kern.tuple_prob, kern.tuple_alias, lo, hi, _to_unit(r))


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _head_tuple(t, k, kern):  # pragma: no cover - numba
    """Row of ``tuple_ranks`` drawn at t for block k, or -1 if the block has no head tuples:
    given its parent's head tuple where the parent draws one by its head coin at t."""
    p = kern.given_parent[k]
    if p < 0 or not _head_at(t, p, kern):
        return _own_head_tuple(t, k, kern)
    return _given_chain(t, k, kern)


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _given_chain(t, k, kern):  # pragma: no cover - numba
    """Block k's head tuple at t, its parent drawing one: the highest ancestor drawing a head
    tuple at t draws its own, then each block on the way down draws given the one above."""
    top = kern.given_parent[k]
    while kern.given_parent[top] >= 0 and _head_at(t, kern.given_parent[top], kern):
        top = kern.given_parent[top]
    h = _own_head_tuple(t, top, kern)
    node = top
    while node != k:
        child = k
        while kern.given_parent[child] != node:
            child = kern.given_parent[child]
        h = _given_draw(t, child, h, kern)
        node = child
    return h


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def _given_draw(t, k, h, kern):  # pragma: no cover - numba
    """Block k's head tuple at t given its parent's, row h (its own law if h has no entries)."""
    if h < 0:
        return _own_head_tuple(t, k, kern)
    at = kern.given_base[k] + h - kern.tuple_start[kern.given_parent[k]]
    lo, hi = kern.given_segment[at], kern.given_segment[at + 1]
    if hi == lo:
        return _own_head_tuple(t, k, kern)
    r = _hash(_stream(kern, _HEAD_GIVEN, k), t)
    return kern.given_tuple[_alias(kern.given_prob, kern.given_alias, lo, hi, _to_unit(r))]


@numba.njit(cache=True, inline="always", _nrt=False)
def _new_value(t, j, f, k, kern):  # pragma: no cover - numba
    """Field f of new tuple j (at sample t): (value, -1), or (-1, source) to copy."""
    q = _slot(j, kern.field_curve[f], kern.field_slope[f], _stream(kern, _FIELD_SLOT, f),
              kern.field_jitter[f])  # fmt: skip
    if q >= 0:
        return kern.head_rows[f] + q, np.int64(-1)
    if kern.head_rows[f] > 0 and _uniform(_stream(kern, _OLD_COIN, f), t) < kern.old_head_share[f]:
        return _own_value(t, f, kern), np.int64(-1)
    s = _old_source(t, f, k, kern)
    if s < 0:
        return _own_value(t, f, kern), np.int64(-1)
    return np.int64(-1), s


@numba.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
def value_at(t, f, kern, roots):  # pragma: no cover - numba
    """Id (table-local row) of field f at sample t, by following copies back to their origin
    (``roots``: scratch of one entry per root level)."""
    k = kern.block_of[f]
    while True:
        j = _new_tuple(t, k, kern)
        if j >= 0:
            value, source = _new_value(t, j, f, k, kern)
            if source < 0:
                return value
            t = source
            continue
        bits = _block_bits(t, k, kern)
        if not _head_by(bits, t, k, kern):
            _root_sources(t, kern, roots)
            source = _repeat_source(t, k, bits, kern, roots)
            if source >= 0:
                t = source
                continue
        h = _head_tuple(t, k, kern)
        return kern.tuple_ranks[h, kern.position[f]] if h >= 0 else _own_value(t, f, kern)


@numba.njit(cache=True, nogil=True, _nrt=False)
def fill_positions(positions, out, kern, roots):  # pragma: no cover - numba
    """The ids of the samples at ``positions`` (random access; see :func:`value_at`)."""
    for i in range(positions.shape[0]):
        for f in range(out.shape[1]):
            out[i, f] = value_at(positions[i], f, kern, roots)
