"""The generative model behind a workload profile, and its compilation into kernel arrays.

Modelling assumptions (docs/workloads.md has the measurements behind them):

* **Blocks.** Fields fall into blocks whose values recur *together*: a user's ids, an ad and its
  advertiser, a publisher and its site. A block's tuple at a sample is one of three things:
  a **new tuple** (its arrivals follow a growth curve in samples), a **head tuple** (one of a few
  frequent tuples, drawn independently of time: the missing-value pattern, the top site), or a
  **repeat** of the tuple an earlier sample had (copied whole, from a log2-binned distance back).
* **Roots.** A repeat may take the source sample of a *root* instead: one source shared by every
  block that follows it at that sample (the same user seeing the same ad again). Roots are what
  makes several blocks recur together; a block's own repeats recur alone.
* **New tuples.** In a new tuple each field brings a new value (its new values follow a growth
  curve in new tuples of its block), else reuses a head value (a fixed marginal), else reuses a
  cold value an earlier sample had (copied from a log2-binned distance back).
* **Head tuples go together.** A block may draw its head tuple given the head tuple its parent
  block draws at the same sample (a forest of blocks, :mod:`.given`): where the parent draws a
  head tuple by its head coin, the child draws from that tuple's law; elsewhere from its own.
* **Head draws are not entities.** A repeat or a reused cold value never copies a head draw (it
  looks further back); head tuples and head values are independent of time.
* **Scale.** ``scale = s`` makes a miniature: sample t stands for sample t / s of the full
  trace, so growth curves become ``s * curve(x / s)`` and distances ``s * d``; head values stay.
* **Beyond the fitted length** growth curves continue with the Heaps exponent of their last
  doubling (a profile held at full scale has its curves set up to the full length instead).
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import NamedTuple

import numpy as np

from heraldbench.platform.data.workload._kernels import NEW_STREAMS
from heraldbench.platform.data.workload.schema import MAX_BINS, MAX_KNOTS, WorkloadProfile

__all__ = ["Kernels", "alias_table", "compile_profile", "extend_curve", "rescale_pmf", "table_sizes"]


class Kernels(NamedTuple):
    """The compiled profile: every array the kernels read, built once per trace.

    Shapes: F fields, K blocks, L root levels, KN growth-curve knots, NB distance bins. A
    discrete law is an alias table: ``*_prob`` and ``*_alias`` of one entry per outcome; the
    laws of several blocks or fields share one array, cut by a ``*_start`` array.
    """

    keys: np.ndarray  # (NEW_STREAMS,) uint64
    block_of: np.ndarray  # (F,) block of each field
    position: np.ndarray  # (F,) the field's column within its block's head tuples
    block_start: np.ndarray  # (K + 1,) fields of block k: block_fields[start[k]:start[k+1]]
    block_fields: np.ndarray  # (F,)
    block_curve: np.ndarray  # (K, KN) new tuples before sample 2**i
    block_slope: np.ndarray  # (K, KN) new tuples per sample between knots i and i + 1
    block_jitter: np.ndarray  # (K,) slot jitter, 1 - the curve's largest per-sample rate
    head_share: np.ndarray  # (K,) share of samples drawing a head tuple
    repeat_cdf: np.ndarray  # (K, NB) repeat distance by log2 bin, cumulative
    repeat_prob: np.ndarray  # (K, NB) the same law as an alias table
    repeat_alias: np.ndarray  # (K, NB)
    root_rate: np.ndarray  # (L,)
    root_cdf: np.ndarray  # (L, NB)
    root_prob: np.ndarray  # (L, NB)
    root_alias: np.ndarray  # (L, NB)
    follow: np.ndarray  # (L, K) P(block k copies root lv's source | the root has one)
    tuple_start: np.ndarray  # (K + 1,) head tuples of block k: tuple_start[k]:tuple_start[k+1]
    tuple_prob: np.ndarray  # (T,)
    tuple_alias: np.ndarray  # (T,) absolute index
    tuple_ranks: np.ndarray  # (T, max width) head rank of each field of each head tuple
    given_parent: np.ndarray  # (K,) the block whose head tuple a block's is drawn given; -1
    given_base: np.ndarray  # (K,) block k's first entry in given_segment
    given_segment: np.ndarray  # k's law given parent row r: given_segment[base + r : base + r + 2]
    given_tuple: np.ndarray  # (E,) the head tuple (absolute row) of each entry
    given_prob: np.ndarray  # (E,)
    given_alias: np.ndarray  # (E,) absolute index
    head_order: np.ndarray  # (K,) every block, each after its parent; empty without links
    head_rows: np.ndarray  # (F,) ranks 0..head_rows-1 are head values
    marginal_start: np.ndarray  # (F + 1,)
    marginal_prob: np.ndarray  # (sum head_rows,) head marginal of values in new tuples
    marginal_alias: np.ndarray  # (sum head_rows,) absolute index
    field_curve: np.ndarray  # (F, KN) new values before new tuple 2**i
    field_slope: np.ndarray  # (F, KN)
    field_jitter: np.ndarray  # (F,)
    old_head_share: np.ndarray  # (F,) P(head value | new tuple, no new value)
    old_cdf: np.ndarray  # (F, NB) distance of a new tuple's reused cold value
    old_prob: np.ndarray  # (F, NB)
    old_alias: np.ndarray  # (F, NB)


def extend_curve(knots: list[float], length: int = MAX_KNOTS) -> np.ndarray:
    """A growth curve with ``length`` knots: the given ones, then Heaps' law with the exponent of
    the last doubling (clipped to [0, 1]: a count never grows faster than its positions)."""
    curve = np.zeros(length)
    given = np.asarray(knots, dtype=np.float64)[:length]
    curve[: len(given)] = given
    last = len(given) - 1
    if last >= 1 and given[last - 1] > 0:
        exponent = math.log2(max(given[last], 1e-12) / given[last - 1])
    else:
        exponent = 1.0
    exponent = min(max(exponent, 0.0), 1.0)
    for i in range(len(given), length):
        curve[i] = curve[i - 1] * 2.0**exponent
    return curve


def rescale_curve(curve: np.ndarray, scale: float) -> np.ndarray:
    """``scale * curve(x / scale)`` at the knots x = 2**i."""
    if scale == 1.0:
        return curve
    positions = np.exp2(np.arange(len(curve))) / scale
    return scale * _interpolate(curve, positions)


def _interpolate(curve: np.ndarray, positions: np.ndarray) -> np.ndarray:
    out = np.empty(len(positions))
    for n, x in enumerate(positions):
        if x < 1:
            out[n] = curve[0] * x
            continue
        i = min(int(math.floor(math.log2(x))), len(curve) - 2)
        low = 2.0**i
        out[n] = curve[i] + (curve[i + 1] - curve[i]) * (x - low) / low
    return out


#: Sources lie at most 2**FAR_BIN - 1 samples back (the generator's ring holds them); the mass
#: of farther bins is folded into the farthest kept one. Modelling assumption: a source that far
#: back is beyond any cache's memory either way, so only its being far matters.
FAR_BIN = 20


def rescale_pmf(pmf: list[float], scale: float, bins: int = MAX_BINS) -> np.ndarray:
    """A log2-binned distance law with every distance multiplied by ``scale`` (<= 1): bin b's
    mass moves to b + log2(scale), split between the two bins it straddles; below 1, to bin 0;
    beyond FAR_BIN, to the bin below it."""
    out = np.zeros(bins)
    shift = math.log2(scale) if scale != 1.0 else 0.0
    for b, mass in enumerate(pmf):
        position = b + shift
        low = math.floor(position)
        upper_share = position - low
        for target, share in ((low, 1.0 - upper_share), (low + 1, upper_share)):
            if share > 0:
                out[min(max(target, 0), FAR_BIN - 1)] += mass * share
    return out


def table_sizes(profile: WorkloadProfile, samples: int, scale: float = 1.0) -> list[int]:
    """Rows of each table for a trace of ``samples``: the head values, then every new value the
    trace can bring (a row or two more than it brings, never fewer)."""
    sizes = {}
    for block in profile.blocks:
        tuples = _tau(rescale_curve(extend_curve(block.new_tuples), scale), samples)
        for name in block.fields:
            field = profile.field(name)
            new = _tau(rescale_curve(extend_curve(field.new_values), scale), math.ceil(tuples) + 1)
            sizes[name] = len(field.head) + math.ceil(new) + 1
    return [sizes[f.name] for f in profile.fields]


def _tau(curve: np.ndarray, x: float) -> float:
    return float(_interpolate(curve, np.array([float(x)]))[0])


def _jitter(curve: np.ndarray) -> float:
    """1 - the largest count per position: the slot jitter that keeps every slot."""
    steps = np.diff(np.concatenate([[0.0], curve]))
    widths = np.concatenate([[1.0], np.exp2(np.arange(len(curve) - 1))])
    return float(1.0 - np.clip(steps / widths, 0.0, 1.0).max())


def _slope(curve: np.ndarray) -> np.ndarray:
    """Count per position between knot i (at 2**i) and knot i + 1."""
    slope = np.zeros(len(curve))
    slope[:-1] = np.diff(curve) / np.exp2(np.arange(len(curve) - 1))
    return slope


def alias_table(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vose's alias table of a discrete law: outcome i, or its alias, with one uniform draw."""
    weights = np.asarray(weights, np.float64)
    n = len(weights)
    total = weights.sum()
    if n == 0:
        return np.zeros(0), np.zeros(0, np.int64)
    scaled = weights * n / total if total > 0 else np.ones(n)
    prob, alias = np.ones(n), np.arange(n, dtype=np.int64)
    small = [i for i in range(n) if scaled[i] < 1.0]
    large = [i for i in range(n) if scaled[i] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        prob[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        (small if scaled[g] < 1.0 else large).append(g)
    return prob, alias


def _aliases(laws: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Alias tables of several laws in one array each, aliases as absolute indices."""
    probs, aliases, offset = [], [], 0
    for law in laws:
        prob, alias = alias_table(law)
        probs.append(prob)
        aliases.append(alias + offset)
        offset += len(law)
    if not probs:
        return np.zeros(0), np.zeros(0, np.int64)
    return np.concatenate(probs), np.concatenate(aliases).astype(np.int64)


def _distance_tables(pmfs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cdf, alias prob, alias) of per-row distance laws, alias indices within the row."""
    cdf = np.stack([_cdf(p) for p in pmfs])
    tables = [alias_table(p) for p in pmfs]
    return cdf, np.stack([t[0] for t in tables]), np.stack([t[1] for t in tables])


def _cdf(pmf: np.ndarray) -> np.ndarray:
    cdf = np.cumsum(pmf)
    return cdf / cdf[-1] if cdf[-1] > 0 else cdf


def compile_profile(profile: WorkloadProfile, *, seed: int, scale: float = 1.0) -> Kernels:
    """The arrays :mod:`._kernels` reads, for a trace of ``profile`` at ``scale`` with ``seed``."""
    names = [f.name for f in profile.fields]
    index = {name: f for f, name in enumerate(names)}
    blocks = profile.blocks
    block_of = np.empty(len(names), np.int64)
    position = np.empty(len(names), np.int64)
    order: list[int] = []
    for k, block in enumerate(blocks):
        for p, name in enumerate(block.fields):
            block_of[index[name]], position[index[name]] = k, p
            order.append(index[name])
    block_curve = np.stack([rescale_curve(extend_curve(b.new_tuples), scale) for b in blocks])
    field_curve = np.stack(
        [rescale_curve(extend_curve(f.new_values), scale) for f in profile.fields]
    )
    tuples, tuple_laws = _head_tuples(profile)
    tuple_start = np.concatenate([[0], np.cumsum([len(law) for law in tuple_laws])])
    tuple_start = tuple_start.astype(np.int64)
    tuple_prob, tuple_alias = _aliases(tuple_laws)
    marginal = [np.asarray(f.head, np.float64) for f in profile.fields]
    marginal_prob, marginal_alias = _aliases(marginal)
    levels = max(len(profile.roots), 1)
    follow = np.zeros((levels, len(blocks)))
    for k, block in enumerate(blocks):
        follow[: len(block.follow), k] = block.follow
    repeat = _distance_tables([rescale_pmf(b.repeat_distance, scale) for b in blocks])
    roots = _distance_tables(
        [rescale_pmf(r.distance, scale) for r in profile.roots] or [rescale_pmf([1.0], 1.0)]
    )
    old = _distance_tables([rescale_pmf(f.old_value_distance, scale) for f in profile.fields])
    return Kernels(
        keys=np.random.SeedSequence([seed, 0x50F11E]).generate_state(NEW_STREAMS, np.uint64),
        block_of=block_of,
        position=position,
        block_start=np.concatenate([[0], np.cumsum([len(b.fields) for b in blocks])]).astype(
            np.int64
        ),
        block_fields=np.asarray(order, np.int64),
        block_curve=block_curve,
        block_slope=np.stack([_slope(c) for c in block_curve]),
        block_jitter=np.array([_jitter(c) for c in block_curve]),
        head_share=np.array([b.head_share for b in blocks]),
        repeat_cdf=repeat[0],
        repeat_prob=repeat[1],
        repeat_alias=repeat[2],
        root_rate=np.array([r.rate for r in profile.roots] or [0.0]),
        root_cdf=roots[0],
        root_prob=roots[1],
        root_alias=roots[2],
        follow=follow,
        tuple_start=tuple_start,
        tuple_prob=tuple_prob,
        tuple_alias=tuple_alias,
        tuple_ranks=tuples,
        **_given_tables(profile, tuple_start),
        head_rows=np.array([len(f.head) for f in profile.fields], np.int64),
        marginal_start=np.concatenate([[0], np.cumsum([len(m) for m in marginal])]).astype(np.int64),
        marginal_prob=marginal_prob,
        marginal_alias=marginal_alias,
        field_curve=field_curve,
        field_slope=np.stack([_slope(c) for c in field_curve]),
        field_jitter=np.array([_jitter(c) for c in field_curve]),
        old_head_share=np.array([f.old_head_share for f in profile.fields]),
        old_cdf=old[0],
        old_prob=old[1],
        old_alias=old[2],
    )


def _head_tuples(profile: WorkloadProfile) -> tuple[np.ndarray, list[np.ndarray]]:
    width = max(len(b.fields) for b in profile.blocks)
    rows: list[list[int]] = []
    laws: list[np.ndarray] = []
    for block in profile.blocks:
        for ranks in block.head_tuples.ranks:
            rows.append(list(ranks) + [0] * (width - len(ranks)))
        laws.append(np.asarray(block.head_tuples.probability, np.float64))
    return np.asarray(rows, np.int64).reshape(-1, width), laws


def _given_tables(profile: WorkloadProfile, tuple_start: np.ndarray) -> dict[str, np.ndarray]:
    """The ``given_*`` arrays of :class:`Kernels`: each child block's law per parent row
    (``tuple_start``: each block's first head tuple, as in :class:`Kernels`)."""
    blocks = profile.blocks
    parent = np.full(len(blocks), -1, np.int64)
    base = np.zeros(len(blocks), np.int64)
    segment: list[int] = []
    tuples: list[int] = []
    laws: list[np.ndarray] = []
    for k, block in enumerate(blocks):
        if block.given is None:
            continue
        given = block.given
        parent[k], base[k] = given.block, len(segment)
        rows = np.asarray(given.parent_tuples, np.int64)
        cuts = np.searchsorted(rows, np.arange(len(blocks[given.block].head_tuples.ranks) + 1))
        segment.extend((len(tuples) + cuts).tolist())
        tuples.extend((tuple_start[k] + np.asarray(given.tuples, np.int64)).tolist())
        probability = np.asarray(given.probability, np.float64)
        laws.extend(probability[a:b] for a, b in pairwise(cuts) if b > a)
    prob, alias = _aliases(laws)
    # No links, no order: the generator then skips the pass that draws parents first.
    order = _parents_first(parent) if (parent >= 0).any() else np.zeros(0, np.int64)
    return {
        "given_parent": parent, "given_base": base, "head_order": order,
        "given_segment": np.asarray(segment, np.int64),
        "given_tuple": np.asarray(tuples, np.int64), "given_prob": prob, "given_alias": alias,
    }  # fmt: skip


def _parents_first(parent: np.ndarray) -> np.ndarray:
    """The blocks ordered so that each comes after its parent (the forest is acyclic)."""
    depth = np.zeros(len(parent), np.int64)
    for k in range(len(parent)):
        p = parent[k]
        while p >= 0:
            depth[k] += 1
            p = parent[p]
    return np.argsort(depth, kind="stable").astype(np.int64)
