"""Relative figures of a submission: each run against the naive run of its group.

A group is one grid point, one seed and one action (simulated or trained): the runs that saw
the same trace under the same settings but for the scheduler. The pipelines fill the figures in
as a submission ends (:mod:`~heraldbench.pipelines.experiment`); the service computes them when
a run is read (``heraldbench.api.results``); both group by these rules.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

from heraldbench.platform.metrics import Counts, relative_to
from heraldbench.platform.schedulers import BASELINE

__all__ = ["NO_RELATIVE", "Group", "baselines", "group_of", "relative_or_none"]

T = TypeVar("T")
#: (grid point index, seed, action).
Group = tuple[int, int, str]
#: The figures of a run without counts, or whose group has no finished naive run.
NO_RELATIVE: dict[str, float | None] = {"pull": None, "push": None, "overall": None}


def group_of(point_index: int, seed: int, action: str) -> Group:
    """The group a run is compared within."""
    return (point_index, seed, action)


def baselines(runs: Iterable[tuple[Hashable, str, T]]) -> dict[Hashable, T]:
    """Each group's naive run, from (group, scheduler kind, run) of the runs that can serve as
    one (finished, with counts)."""
    return {group: run for group, kind, run in runs if kind == BASELINE}


def relative_or_none(counts: Counts | None, base: Counts | None) -> dict[str, float | None]:
    """pull / push / overall against the group's naive counts; None figures without either."""
    if counts is None or base is None:
        return dict(NO_RELATIVE)
    return relative_to(counts, base)
