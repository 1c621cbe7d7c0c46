"""Click-prediction quality: ROC AUC, log loss and accuracy, from logits and labels.

Implemented in numpy (no scikit-learn at run time); a test holds them to scikit-learn's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["Evaluation", "accuracy", "log_loss", "roc_auc", "score"]


@dataclass(frozen=True)
class Evaluation:
    """Quality on the held-out samples after ``iteration`` training iterations.

    Attributes:
        iteration: training iterations done when it was measured.
        samples: held-out samples scored.
        auc: ROC AUC (NaN when the held-out labels are all equal).
        logloss: mean binary cross-entropy, natural log.
        accuracy: share of samples whose logit sign matches the label (threshold 0.5).
    """

    iteration: int
    samples: int
    auc: float
    logloss: float
    accuracy: float

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)

    def metrics(self) -> dict[str, float]:
        return {"auc": self.auc, "logloss": self.logloss, "accuracy": self.accuracy}


def roc_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve: the Mann-Whitney statistic, tied scores sharing their rank.

    Args:
        labels: (n,) in {0, 1}.
        scores: (n,) any monotone function of the click probability (logits do).
    """
    labels = np.asarray(labels, dtype=bool)
    positives = int(labels.sum())
    negatives = labels.size - positives
    if positives == 0 or negatives == 0:
        return float("nan")
    _, inverse, counts = np.unique(np.asarray(scores, np.float64), return_inverse=True,
                                   return_counts=True)  # fmt: skip
    # Tied scores share the mean of the ranks they span (1-based).
    ends = np.cumsum(counts)
    mean_rank = ends - (counts - 1) / 2.0
    rank_sum = float(mean_rank[inverse][labels].sum())
    return (rank_sum - positives * (positives + 1) / 2.0) / (positives * negatives)


def log_loss(labels: np.ndarray, logits: np.ndarray) -> float:
    """Mean binary cross-entropy computed from logits (stable: no clipping needed)."""
    z = np.asarray(logits, np.float64)
    y = np.asarray(labels, np.float64)
    # -[y log σ(z) + (1-y) log(1-σ(z))] = softplus(z) - y·z
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


def accuracy(labels: np.ndarray, logits: np.ndarray) -> float:
    """Share of samples with (logit > 0) == label."""
    return float(np.mean((np.asarray(logits) > 0) == (np.asarray(labels) > 0.5)))


def score(iteration: int, labels: np.ndarray, logits: np.ndarray) -> Evaluation:
    """All three metrics of one evaluation."""
    return Evaluation(
        iteration=iteration,
        samples=int(labels.size),
        auc=roc_auc(labels, logits),
        logloss=log_loss(labels, logits),
        accuracy=accuracy(labels, logits),
    )
