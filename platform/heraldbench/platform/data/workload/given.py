"""Head tuples that go together: which head tuple a block draws given another block's.

Real logs combine their frequent tuples: a frequent ad comes with its site and app, not with any
frequent site. The fit links blocks into a forest, Chow–Liu style: the pairs of blocks whose head
tuples say the most about one another (mutual information where both draw head tuples, weighted
by the share of samples where they do, and kept only where a G-test rejects independence) are
joined by a maximum spanning forest, each tree hung from the block with the most information in
all; each child block keeps its head tuples' law given each of its parent's head tuples.

Modelling assumptions: a forest of pairwise laws is enough (on Avazu's rows it takes the round
trip within every target; on Criteo's lines it leaves the figures where they were:
docs/workloads.md); a child follows its parent only where the parent draws a head tuple by its
head coin, and a parent tuple never seen with the child's head tuples leaves it its own law.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import chi2

from heraldbench.platform.data.workload.schema import HeadGiven, significant

__all__ = ["MIN_TOGETHER", "SIGNIFICANCE", "fit_given", "head_forest"]

#: Samples where two blocks both draw head tuples before their link is considered.
MIN_TOGETHER = 20
#: A link must be this unlikely under independence (G-test): the information two independent
#: blocks show in a finite trace is positive, and would link every block with noise.
SIGNIFICANCE = 1e-3
#: Rounds of iterative proportional fitting (:func:`_balanced`). A fixed number: where the
#: child's shares cannot all be kept, balancing does not converge but drives some pairs
#: towards 0 (the fits of Criteo's and Avazu's lines still change between 200 and 400 rounds).
_IPF_ROUNDS = 200


def fit_given(rows: np.ndarray) -> list[HeadGiven | None]:
    """Each block's head tuples given its parent's, from ``rows`` ((n, K): each block's head
    tuple row at each sample, -1 where it draws none)."""
    parents = head_forest(rows)
    return [None if p < 0 else _given(rows[:, p], rows[:, k], p) for k, p in enumerate(parents)]


def head_forest(rows: np.ndarray) -> list[int]:
    """Each block's parent (-1: a root): a maximum spanning forest of the pairwise weights
    (Prim's, each tree started at the block with the most information in all)."""
    weights = _weights(rows)
    blocks = rows.shape[1]
    parent = [-1] * blocks
    inside = np.zeros(blocks, np.bool_)
    best = np.zeros(blocks)  # each outside block's strongest link into the forest, and to whom
    via = np.full(blocks, -1)
    while not inside.all():
        k = int(np.argmax(np.where(inside, -1.0, best)))
        if best[k] > 0:
            parent[k] = int(via[k])
        else:  # no link left: a new tree
            rest = np.flatnonzero(~inside)
            k = int(rest[np.argmax(weights[rest].sum(axis=1))])
        inside[k] = True
        closer = ~inside & (weights[k] > best)
        best[closer], via[closer] = weights[k, closer], k
    return parent


def _weights(rows: np.ndarray) -> np.ndarray:
    """Mutual information of two blocks' head tuples where both draw one, times that share."""
    blocks = rows.shape[1]
    weights = np.zeros((blocks, blocks))
    heads = rows >= 0
    for a in range(blocks):
        for b in range(a + 1, blocks):
            both = heads[:, a] & heads[:, b]
            if both.sum() >= MIN_TOGETHER:
                information = _information(rows[both, a], rows[both, b])
                weights[a, b] = weights[b, a] = information * both.mean()
    return weights


def _pair_counts(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct pairs of two paired samples of non-negative integers, ordered by x then y,
    as (x values, y values, counts)."""
    width = int(y.max()) + 1
    pairs, counts = np.unique(x.astype(np.int64) * width + y, return_counts=True)
    return pairs // width, pairs % width, counts


def _information(x: np.ndarray, y: np.ndarray) -> float:
    """Mutual information (nats) of two paired samples of non-negative integers; 0 unless the
    G-test rejects their independence at :data:`SIGNIFICANCE`."""
    xs, ys, counts = _pair_counts(x, y)
    n = len(x)
    px = np.bincount(x) / n
    py = np.bincount(y) / n
    joint = counts / n
    information = float(np.sum(joint * np.log(joint / (px[xs] * py[ys]))))
    freedom = (np.count_nonzero(px) - 1) * (np.count_nonzero(py) - 1)
    if freedom < 1 or 2 * n * information <= chi2.isf(SIGNIFICANCE, freedom):
        return 0.0
    return information


def _given(parent: np.ndarray, child: np.ndarray, block: int) -> HeadGiven:
    both = (parent >= 0) & (child >= 0)
    rows, tuples, counts = _pair_counts(parent[both], child[both])
    joint = _balanced(rows, tuples, counts.astype(np.float64), np.bincount(parent[parent >= 0]))
    probability = np.array([significant(j) for j in joint / np.bincount(rows, weights=joint)[rows]])
    drawn = probability > 0  # balancing drove the others below a float's range: never drawn
    return HeadGiven(
        block=block, parent_tuples=rows[drawn].tolist(), tuples=tuples[drawn].tolist(),
        probability=probability[drawn].tolist(),
    )  # fmt: skip


def _balanced(rows: np.ndarray, tuples: np.ndarray, counts: np.ndarray,
              parent_counts: np.ndarray) -> np.ndarray:  # fmt: skip
    """The joint counts of (parent row, child tuple) where both draw head tuples, scaled
    (iterative proportional fitting) so that its parent rows weigh as the parent draws them in
    the generator (its own law, over all its head draws) while each child tuple keeps the share
    it has where both draw head tuples. Without it the child's law would drift: a parent tuple
    that occurs with the child's head tuples more or less often than it occurs overall would
    pass that on (Avazu's site and app fields came out about 5% more varied in a global batch
    of W=16, the whole batch 1.5%)."""
    seen = np.unique(rows)
    present = np.zeros(len(parent_counts))
    present[seen] = parent_counts[seen]
    row_target = present / present.sum()
    column_target = np.bincount(tuples, weights=counts) / counts.sum()
    joint = counts / counts.sum()
    for _ in range(_IPF_ROUNDS):
        row = np.bincount(rows, weights=joint, minlength=len(row_target))
        joint *= (row_target / np.maximum(row, 1e-300))[rows]
        column = np.bincount(tuples, weights=joint, minlength=len(column_target))
        joint *= (column_target / np.maximum(column, 1e-300))[tuples]
    return joint
