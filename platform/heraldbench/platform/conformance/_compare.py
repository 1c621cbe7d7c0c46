"""Putting two runs side by side: per iteration and in total, each difference at its first.

A :class:`Side` is one run's counts per iteration (one integer array per quantity) and its
decisions per iteration (per quantity, one tuple of integer arrays per iteration: a partition,
a sync plan per worker, ...). :func:`side_by_side` compares heraldbench's side with the
released code's over the iterations both have, and fills a :class:`SystemReport`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from heraldbench.platform.conformance._report import Difference, SystemReport

__all__ = ["Decision", "Side", "digest", "side_by_side"]

#: One iteration's decision: arrays compared element for element (a partition; a sync plan as
#: one sorted array of rows per worker).
Decision = tuple[np.ndarray, ...]
_SHOWN = 8  # ids shown of a set that differs


@dataclass
class Side:
    """One run's counts and decisions per iteration (``iterations`` of them; a quantity may
    cover fewer, its first ones)."""

    counts: dict[str, np.ndarray] = field(default_factory=dict)
    decisions: dict[str, list[Decision]] = field(default_factory=dict)


def digest(decision: Decision) -> str:
    """A short fingerprint of one decision, to show two equal decisions as equal."""
    h = hashlib.sha1()
    for part in decision:
        h.update(np.ascontiguousarray(part, np.int64).tobytes() + b"|")
    return h.hexdigest()[:8]


def side_by_side(
    report: SystemReport,
    ours: Side,
    released: Side,
    explain: Callable[[str], str | None],
) -> SystemReport:
    """Fill ``report``'s totals, per-iteration rows and differences from the two sides."""
    rows: list[dict[str, Any]] = [{"iteration": i} for i in range(report.iterations)]
    for name, mine in ours.counts.items():
        theirs = released.counts[name]
        n = min(len(mine), len(theirs))
        report.totals[name] = (int(mine[:n].sum()), int(theirs[:n].sum()))
        for i in range(n):
            rows[i][name] = (int(mine[i]), int(theirs[i]))
        first = _first_unequal(mine[:n], theirs[:n])
        if first is not None:
            report.differences.append(Difference(
                first, name, int(mine[first]), int(theirs[first]), explain(name)))  # fmt: skip
    for name, mine_d in ours.decisions.items():
        theirs_d = released.decisions[name]
        n = min(len(mine_d), len(theirs_d))
        agree = [_equal(mine_d[i], theirs_d[i]) for i in range(n)]
        report.totals[f"{name} agrees"] = (sum(agree), n)
        for i in range(n):
            rows[i][name] = (digest(mine_d[i]), digest(theirs_d[i]))
        if not all(agree):
            first = agree.index(False)
            a, b = _where_unequal(mine_d[first], theirs_d[first])
            report.differences.append(Difference(first, name, a, b, explain(name)))
    report.per_iteration = rows
    return report


def _first_unequal(a: np.ndarray, b: np.ndarray) -> int | None:
    unequal = np.flatnonzero(np.asarray(a) != np.asarray(b))
    return int(unequal[0]) if unequal.size else None


def _equal(a: Decision, b: Decision) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def _where_unequal(a: Decision, b: Decision) -> tuple[dict[str, Any], dict[str, Any]]:
    """What differs in two decisions: the first part (worker) that differs, its size, and the
    ids in one and not the other (the first few)."""
    part = next(j for j in range(max(len(a), len(b))) if not _part_equal(a, b, j))
    x, y = _part(a, part), _part(b, part)
    if x.shape == y.shape and len(a) == 1:  # one array, position by position (a partition)
        at = np.flatnonzero(x != y)
        return ({"positions": int(at.size), "first": int(at[0]), "value": int(x[at[0]])},
                {"positions": int(at.size), "first": int(at[0]), "value": int(y[at[0]])})
    return (_summary(part, x, y), _summary(part, y, x))


def _summary(part: int, mine: np.ndarray, other: np.ndarray) -> dict[str, Any]:
    only = np.setdiff1d(mine, other)
    return {"part": part, "size": int(mine.size), "only_here": int(only.size),
            "first_only_here": only[:_SHOWN].tolist()}  # fmt: skip


def _part(decision: Decision, j: int) -> np.ndarray:
    return decision[j] if j < len(decision) else np.zeros(0, np.int64)


def _part_equal(a: Decision, b: Decision, j: int) -> bool:
    return np.array_equal(_part(a, j), _part(b, j))

