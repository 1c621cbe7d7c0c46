"""What a trace is made of, read the way :mod:`.model` generates it.

* **Blocks**: each sample's best earlier match (the most recent sample sharing the most of its
  informative values, weighted by rarity) says which fields recur together; fields whose
  matches correlate are clustered (average linkage) into blocks.
* **Classes**: a block's tuple at a sample is *head* (a tuple seen at least ``head_min`` times,
  spread over the trace as draws independent of time are), *new* (the first sample of any other
  tuple) or a *repeat* (whose source is the tuple's previous sample).
* **Roots**: a repeat whose tuple also sits, together with another repeating block's tuple, in
  one earlier sample (the most such blocks, then the most recent) is a root repeat; up to
  ``levels`` roots per sample, each taking the blocks the previous ones left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from scipy.stats import binom

__all__ = ["Structure", "find_blocks", "head_values", "old_head_shares", "read_structure", "tuple_ids"]

HEAD, NEW, REPEAT = 0, 1, 2
#: Values seen in more than this share of samples are not evidence of a recurring entity.
_INFORMATIVE_SHARE = 0.01
#: Earlier samples of a tuple considered as a root's source.
_ROOT_CANDIDATES = 16
#: Fields whose matches correlate at least 1 - CUT (average linkage) share a block.
CUT = 0.5
#: Time windows a head tuple must spread over (see :func:`head_tuples`).
WINDOWS = 16
#: ... and fill at least this share of the windows uniform draws would fill.
SPREAD = 0.5
#: Samples within which a head tuple's next occurrence counts as close (see :func:`head_tuples`).
CLOSE = 64
#: A tuple whose occurrences come close this much more often than independent draws' would
#: (one-sided binomial test) recurs in bursts: an entity, not a head tuple.
BURST_SIGNIFICANCE = 1e-3


@dataclass
class Structure:
    """Blocks, per-block classes and sources, and root sources of a trace of n samples.

    Attributes:
        blocks: the fields of each block.
        tuples: (n, K) tuple id of each block at each sample.
        classes: (n, K) HEAD, NEW or REPEAT.
        source: (n, K) the previous sample of a repeat's tuple (-1 otherwise).
        root: (n, L) each root's source sample (-1: none).
        follows: (n, L, K) which blocks took that root.
    """

    blocks: list[list[int]]
    tuples: np.ndarray
    classes: np.ndarray
    source: np.ndarray
    root: np.ndarray
    follows: np.ndarray
    head_min: int


def find_blocks(ids: np.ndarray, cut: float = CUT) -> list[list[int]]:
    """Fields clustered by how often they match the same earlier sample."""
    n, fields = ids.shape
    if fields == 1:
        return [[0]]
    weights = _rarity_weights(ids)
    matches = np.zeros((n, fields), np.bool_)
    found = _best_matches(np.ascontiguousarray(ids), weights, matches)
    masks = matches[found].astype(np.float64)
    correlation = np.zeros((fields, fields))
    if len(masks) > 2:
        with np.errstate(invalid="ignore", divide="ignore"):
            correlation = np.nan_to_num(np.corrcoef(masks.T))
    distance = np.clip(1.0 - correlation, 0.0, 2.0)
    np.fill_diagonal(distance, 0.0)
    labels = fcluster(linkage(squareform(distance, checks=False), "average"), cut, "distance")
    order: dict[int, list[int]] = {}
    for f, label in enumerate(labels):
        order.setdefault(int(label), []).append(f)
    return sorted(order.values(), key=lambda fs: fs[0])


def _rarity_weights(ids: np.ndarray) -> np.ndarray:
    """log(n / count) of each sample's value in each field, 0 for values seen too often."""
    n = len(ids)
    weights = np.zeros(ids.shape)
    for f in range(ids.shape[1]):
        _, inverse, counts = np.unique(ids[:, f], return_inverse=True, return_counts=True)
        c = counts[inverse].astype(np.float64)
        weights[:, f] = np.where(c <= max(1.0, _INFORMATIVE_SHARE * n), np.log(n / c), 0.0)
    return weights


@numba.njit(cache=True)
def _best_matches(ids, weights, matches):  # pragma: no cover - numba
    """For each sample, the fields it shares with its best earlier match (most recent sample of
    one of its informative values that shares the most weight); returns samples with a match."""
    n, fields = ids.shape
    last = numba.typed.Dict.empty(key_type=numba.types.int64, value_type=numba.types.int64)
    found = np.zeros(n, np.bool_)
    for t in range(n):
        best, best_score = -1, 0.0
        for f in range(fields):
            if weights[t, f] <= 0.0:
                continue
            key = np.int64(ids[t, f]) * 1024 + f
            if key not in last:
                continue
            s = last[key]
            if s == best:
                continue
            score = 0.0
            for g in range(fields):
                if ids[s, g] == ids[t, g]:
                    score += weights[t, g]
            if score > best_score or (score == best_score and s > best):
                best, best_score = s, score
        if best >= 0 and best_score > 0.0:
            found[t] = True
            for g in range(fields):
                matches[t, g] = ids[best, g] == ids[t, g]
        for f in range(fields):
            last[np.int64(ids[t, f]) * 1024 + f] = t
    return found


def tuple_ids(ids: np.ndarray, fields: list[int]) -> np.ndarray:
    """Dense id of each sample's tuple of ``fields`` (equal tuples, equal ids)."""
    if len(fields) == 1:
        return np.unique(ids[:, fields[0]], return_inverse=True)[1].astype(np.int64)
    columns = np.ascontiguousarray(ids[:, fields])
    return np.unique(columns, axis=0, return_inverse=True)[1].ravel().astype(np.int64)


def read_structure(ids: np.ndarray, blocks: list[list[int]], head_min: int, levels: int = 2) -> Structure:
    """Classes, sources and roots of every block of ``ids`` (table-local ids, (n, F))."""
    n = len(ids)
    tuples = np.stack([tuple_ids(ids, fields) for fields in blocks], axis=1)
    classes = np.empty(tuples.shape, np.int8)
    source = np.full(tuples.shape, -1, np.int64)
    for k in range(len(blocks)):
        classes[:, k], source[:, k] = _classify(tuples[:, k], head_min)
    root = np.full((n, levels), -1, np.int64)
    follows = np.zeros((n, levels, len(blocks)), np.bool_)
    if len(blocks) > 1:
        _roots(tuples, classes, source, root, follows)
    return Structure(blocks, tuples, classes, source, root, follows, head_min)


def head_tuples(tuples: np.ndarray, head_min: int) -> np.ndarray:
    """Which tuple ids are head tuples: seen at least ``head_min`` times and drawn like draws
    independent of time are. A frequent tuple seen in bursts is an entity that repeats: one
    crowded into a few of the trace's WINDOWS windows (filling fewer than SPREAD of those that as
    many uniform draws would fill), or one whose next occurrence comes within CLOSE samples more
    often than uniform draws' would (a binomial test at BURST_SIGNIFICANCE; a frequent user seen
    over the whole trace in sessions is spread, but not independent of time).
    """
    counts = np.bincount(tuples)
    n = len(tuples)
    window = np.arange(n) * WINDOWS // max(n, 1)
    pairs = np.unique(tuples * WINDOWS + window)
    occupied = np.bincount(pairs // WINDOWS, minlength=len(counts))
    uniform = WINDOWS * (1.0 - (1.0 - 1.0 / WINDOWS) ** counts)
    frequent = (counts >= head_min) & (occupied >= SPREAD * uniform)
    return frequent & ~_bursty(tuples, counts, frequent)


def _bursty(tuples: np.ndarray, counts: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Which candidate tuples come back within CLOSE samples more often than uniform draws."""
    order = np.argsort(tuples, kind="stable")
    same = tuples[order[1:]] == tuples[order[:-1]]
    gaps = order[1:] - order[:-1]
    close = np.bincount(tuples[order[1:]][same & (gaps <= CLOSE)], minlength=len(counts))
    n = max(len(tuples), 1)
    # Modelling assumption: c uniform draws leave a gap within CLOSE with probability about
    # 1 - (1 - CLOSE / n) ** c, independently from gap to gap.
    chance = 1.0 - (1.0 - min(CLOSE / n, 1.0)) ** counts
    gaps_seen = np.maximum(counts - 1, 0)
    surprise = binom.sf(close - 1, gaps_seen, chance)
    return candidates & (surprise < BURST_SIGNIFICANCE)


def head_values(ids: np.ndarray, s: Structure) -> list[dict[int, int]]:
    """Each field's head values, most frequent first: values that are head values on their own
    (:func:`head_tuples` of the field's values) and the values of its block's head tuples."""
    ranks = []
    block_of = {f: k for k, fields in enumerate(s.blocks) for f in fields}
    for f in range(ids.shape[1]):
        values, inverse, counts = np.unique(ids[:, f], return_inverse=True, return_counts=True)
        keep = head_tuples(inverse.ravel(), s.head_min)
        keep[np.unique(inverse.ravel()[s.classes[:, block_of[f]] == HEAD])] = True
        order = np.argsort(-counts[keep], kind="stable")
        ranks.append({int(v): r for r, v in enumerate(values[keep][order])})
    return ranks


def old_head_shares(ids: np.ndarray, s: Structure, heads: list[dict[int, int]]) -> np.ndarray:
    """Per field, the share of head values (``heads``: :func:`head_values`) among the values its
    block's new tuples take from before (head values, and cold values an earlier sample had);
    NaN where they take none."""
    out = np.full(ids.shape[1], np.nan)
    for k, fields in enumerate(s.blocks):
        new_rows = np.flatnonzero(s.classes[:, k] == NEW)
        for f in fields:
            values, first = np.unique(ids[:, f], return_index=True)
            taken = ids[new_rows, f]
            is_head = np.isin(taken, np.fromiter(heads[f], np.int64, len(heads[f])))
            cold = ~is_head & (first[np.searchsorted(values, taken)] != new_rows)
            if is_head.any() or cold.any():
                out[f] = is_head.sum() / (is_head.sum() + cold.sum())
    return out


def _classify(tuples: np.ndarray, head_min: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(tuples, kind="stable")
    previous = np.full(len(tuples), -1, np.int64)
    same = tuples[order[1:]] == tuples[order[:-1]]
    previous[order[1:][same]] = order[:-1][same]
    heads = head_tuples(tuples, head_min)
    classes = np.where(heads[tuples], HEAD, np.where(previous >= 0, REPEAT, NEW))
    return classes.astype(np.int8), np.where(classes == REPEAT, previous, -1)


@numba.njit(cache=True)
def _roots(tuples, classes, source, root, follows):  # pragma: no cover - numba
    n, blocks = tuples.shape
    for t in range(n):
        free = np.zeros(blocks, np.bool_)
        for k in range(blocks):
            free[k] = classes[t, k] == REPEAT
        for level in range(root.shape[1]):
            best, best_count = -1, 1
            for k in range(blocks):
                if not free[k]:
                    continue
                s = source[t, k]
                for _ in range(_ROOT_CANDIDATES):
                    if s < 0:
                        break
                    count = 0
                    for q in range(blocks):
                        if free[q] and tuples[s, q] == tuples[t, q]:
                            count += 1
                    if count > best_count or (count == best_count and count > 1 and s > best):
                        best, best_count = s, count
                    s = source[s, k] if classes[s, k] == REPEAT else -1
            if best < 0:
                break
            root[t, level] = best
            for k in range(blocks):
                if free[k] and tuples[best, k] == tuples[t, k]:
                    follows[t, level, k] = True
                    free[k] = False


def log2_histogram(distances: np.ndarray, bins: int) -> np.ndarray:
    """Counts of distances (>= 1) in the log2 bins [1, 2), [2, 4), ..."""
    if not len(distances):
        return np.zeros(bins)
    b = np.floor(np.log2(np.maximum(distances, 1))).astype(np.int64)
    return np.bincount(np.minimum(b, bins - 1), minlength=bins)[:bins].astype(np.float64)


def growth_knots(event_positions: np.ndarray, length: int) -> list[float]:
    """Cumulative events before position 2**i, for every 2**i <= length, then one knot past
    ``length`` continued with the Heaps exponent of the last doubling."""
    event_positions = np.sort(np.asarray(event_positions))
    top = max(int(math.floor(math.log2(max(length, 1)))), 0)
    knots = [float(np.searchsorted(event_positions, 2**i, side="left")) for i in range(top + 1)]
    at_length = float(len(event_positions))
    half = float(np.searchsorted(event_positions, length / 2, side="left"))
    exponent = math.log2(at_length / half) if half > 0 and at_length > 0 else 1.0
    exponent = min(max(exponent, 0.0), 1.0)
    knots.append(max(at_length * (2.0 ** (top + 1) / length) ** exponent, knots[-1]))
    return knots
