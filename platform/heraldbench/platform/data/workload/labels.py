"""Dense features and labels of a profile trace, and how a profile fits them.

Modelling assumptions: dense features are independent, each drawn from its fitted quantiles (the
readers' ``log(x + 1)`` values); the click logit is ``bias + sum_j w_j z_j + sum_f e_f(row)``
with ``z_j`` the standardised dense features and ``e_f(row)`` a fixed, roughly normal effect of
each row of field f with standard deviation ``field_effect_std[f]``; the bias makes the mean
click probability the profile's click rate. Fitting: ``w`` by L2-regularised logistic regression
on the dense features; a field's effect std by the method of moments, from the spread of its
values' click rates beyond binomial noise, counted once per block (a block's fields name one
entity, so only its most telling field carries the effect).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from heraldbench.platform.data.workload.schema import DenseFeature, LabelModel

__all__ = ["DenseLabelModel", "fit_dense", "fit_labels"]

QUANTILE_LEVELS = 64
_MIN_VALUE_COUNT = 5
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def fit_dense(dense: np.ndarray, names: list[str]) -> list[DenseFeature]:
    """Each dense column's quantiles at QUANTILE_LEVELS + 1 evenly spaced levels."""
    levels = np.linspace(0.0, 1.0, QUANTILE_LEVELS + 1)
    return [
        DenseFeature(name=name, quantiles=[round(float(q), 6) for q in np.quantile(col, levels)])
        for name, col in zip(names, np.asarray(dense, np.float64).T, strict=True)
    ]


def fit_labels(
    labels: np.ndarray, dense: np.ndarray, ids: np.ndarray, names: list[str],
    blocks: list[list[int]],
) -> LabelModel:  # fmt: skip
    """The label model of a trace (``ids``: table-local ids, one column per field)."""
    labels = np.asarray(labels, np.float64)
    rate = float(np.clip(labels.mean(), 1e-4, 1 - 1e-4))
    weights = _logistic_weights(_standardise(np.asarray(dense, np.float64)), labels)
    effects: dict[str, float] = {}
    for fields in blocks:
        stds = [_effect_std(ids[:, f], labels, rate) for f in fields]
        best = int(np.argmax(stds))
        if stds[best] > 0:
            effects[names[fields[best]]] = round(stds[best], 4)
    return LabelModel(
        click_rate=round(rate, 6),
        dense_weights=[round(float(w), 4) for w in weights],
        field_effect_std=effects,
    )


def _standardise(x: np.ndarray) -> np.ndarray:
    std = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)


def _logistic_weights(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """Newton's method on the L2-regularised log loss (intercept unpenalised, not returned)."""
    if x.shape[1] == 0:
        return np.zeros(0)
    design = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(25):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (p - y) + penalty * beta
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-6:
            break
    return np.clip(beta[1:], -20.0, 20.0)


def _effect_std(column: np.ndarray, labels: np.ndarray, rate: float) -> float:
    """Std of the values' click effects on the logit: the spread of the click rates of values
    seen at least _MIN_VALUE_COUNT times, less binomial noise, divided by p(1 - p)."""
    values, inverse, counts = np.unique(column, return_inverse=True, return_counts=True)
    clicks = np.bincount(inverse, weights=labels, minlength=len(values))
    keep = counts >= _MIN_VALUE_COUNT
    if keep.sum() < 2:
        return 0.0
    n, c = counts[keep].astype(np.float64), clicks[keep]
    p = c / n
    mean = (c.sum() / n.sum())
    between = float((n * (p - mean) ** 2).sum() / n.sum() - (mean * (1 - mean) / n).mean())
    if between <= 0:
        return 0.0
    return min(math.sqrt(between) / (rate * (1 - rate)), 10.0)


class DenseLabelModel:
    """The arrays :func:`fill_dense_labels` reads, for a trace with the given layout offsets."""

    def __init__(self, dense: list[DenseFeature], model: LabelModel, field_names: list[str],
                 offsets: np.ndarray, seed: int) -> None:  # fmt: skip
        width = len(dense[0].quantiles) if dense else 2
        self.quantiles = np.array([d.quantiles for d in dense], np.float64).reshape(len(dense), width)
        q = self.quantiles
        mean = q.mean(axis=1, keepdims=True)
        std = q.std(axis=1, keepdims=True)
        self.dense_weight = np.zeros(len(dense))
        self.dense_weight[: len(model.dense_weights)] = model.dense_weights
        self.mean = mean.ravel()
        self.std = np.where(std.ravel() > 0, std.ravel(), 1.0)
        self.effect_std = np.array([model.field_effect_std.get(n, 0.0) for n in field_names])
        self.offsets = np.asarray(offsets, np.int64)
        self.keys = np.random.SeedSequence([seed, 0xDE45E]).generate_state(3, np.uint64)
        self.bias = 0.0
        self.click_rate = model.click_rate

    def arrays(self) -> tuple:
        return (self.quantiles, self.dense_weight, self.mean, self.std, self.effect_std,
                self.keys, self.bias)  # fmt: skip

    def solve_bias(self, positions: np.ndarray, ids: np.ndarray) -> None:
        """Set the bias so that the mean click probability over these samples is the rate."""
        dense = np.empty((len(positions), self.quantiles.shape[0]), np.float32)
        logits = np.empty(len(positions))
        labels = np.empty(len(positions), np.float32)
        self.bias = 0.0
        fill_dense_labels(positions, ids, dense, logits, labels, *self.arrays())
        low, high = -40.0, 40.0
        for _ in range(60):
            mid = (low + high) / 2
            if float(np.mean(0.5 * (1.0 + np.tanh(0.5 * (logits + mid))))) < self.click_rate:
                low = mid
            else:
                high = mid
        self.bias = (low + high) / 2


@numba.njit(cache=True, inline="always")
def _hash(key, x):  # pragma: no cover - numba
    z = (np.uint64(x) * _GOLDEN) ^ key
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def fill_dense_labels(positions, ids, dense, logits, labels, quantiles, dense_weight, mean, std,
                      effect_std, keys, bias):  # pragma: no cover - numba  # fmt: skip
    """Dense features, logits and labels of the samples at ``positions`` (``ids`` global)."""
    levels = quantiles.shape[1] - 1
    for i in range(positions.shape[0]):
        t = positions[i]
        logit = bias
        for j in range(quantiles.shape[0]):
            u = np.float64(_hash(keys[0] ^ (np.uint64(j) * _M2), t) >> np.uint64(11)) / 9007199254740992.0
            x = u * levels
            low = min(np.int64(x), levels - 1)
            value = quantiles[j, low] + (quantiles[j, low + 1] - quantiles[j, low]) * (x - low)
            dense[i, j] = value
            logit += dense_weight[j] * (value - mean[j]) / std[j]
        for f in range(ids.shape[1]):
            if effect_std[f] > 0.0:
                r = _hash(keys[1], ids[i, f])
                mask = np.uint64(0xFFFF)
                total = (r & mask) + ((r >> np.uint64(16)) & mask) + ((r >> np.uint64(32)) & mask) + (r >> np.uint64(48))
                logit += effect_std[f] * (np.float64(total) / 65536.0 - 2.0) * 1.7320508075688772
        logits[i] = logit
        u = (np.float64(_hash(keys[2], t) >> np.uint64(11)) + 0.5) / 9007199254740992.0
        labels[i] = 1.0 if u * (1.0 + math.exp(-logit)) < 1.0 else 0.0
