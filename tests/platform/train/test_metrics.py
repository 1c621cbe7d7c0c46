"""AUC, log loss and accuracy agree with scikit-learn's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from heraldbench.platform.train import accuracy, log_loss, roc_auc

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def test_metrics_match_scikit_learn_with_ties() -> None:
    rng = np.random.default_rng(0)
    labels = (rng.random(2000) < 0.3).astype(np.float32)
    logits = np.round(rng.normal(size=2000) + labels, 1)  # rounding makes many ties
    probs = 1 / (1 + np.exp(-logits))
    assert roc_auc(labels, logits) == pytest.approx(sklearn_metrics.roc_auc_score(labels, logits))
    assert log_loss(labels, logits) == pytest.approx(sklearn_metrics.log_loss(labels, probs))
    assert accuracy(labels, logits) == pytest.approx(
        sklearn_metrics.accuracy_score(labels, probs > 0.5)
    )


def test_auc_of_one_class_is_nan_and_extremes_are_exact() -> None:
    assert math.isnan(roc_auc(np.ones(4), np.arange(4.0)))
    assert roc_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.2, 0.3, 0.4])) == 1.0
    assert roc_auc(np.array([0, 1]), np.array([0.5, 0.5])) == 0.5
    assert log_loss(np.array([1.0]), np.array([800.0])) == pytest.approx(0.0)
