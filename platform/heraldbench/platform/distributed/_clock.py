"""Measured time of one rank, per iteration and phase, and the waiting it spent on stragglers.

Phases: ``schedule`` (waiting for the decision stream), ``pull`` (phase switches, pulls and
prefetches), ``push`` (evict pushes before the reads, update pushes and direct transfers after),
``compute`` (gathering this worker's rows, forward, backward, the updates), ``allreduce``
(dense gradients, the loss and replicated rows' gradients, one collective) and ``wait``.

Waiting is read off the all-reduce: every rank leaves the pull exchange together (it is a
collective), so a rank whose compute took ``c`` seconds reaches the all-reduce
``max(c) − c`` seconds before the slowest one and spends that long waiting inside it. The rest
of its all-reduce time is the all-reduce itself.
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform.train.runtime import Stopwatch

__all__ = ["PHASES", "RankClock", "split_waiting"]

PHASES = ("schedule", "pull", "push", "compute", "allreduce", "wait")


class RankClock(Stopwatch):
    """Seconds per phase for each iteration (a :class:`Stopwatch` that keeps one row per
    iteration); synchronises CUDA so each phase pays its kernels: the waiting is read off the
    phases' times."""

    def __init__(self, device: torch.device) -> None:
        super().__init__(device, sync_phases=True)
        self.rows: list[np.ndarray] = []
        self.current = np.zeros(len(PHASES))

    def drain(self) -> None:
        """Nothing is queued ahead: every phase waited for its kernels."""

    def start_iteration(self) -> None:
        self.current = np.zeros(len(PHASES))
        self.rows.append(self.current)

    def record(self, name: str, seconds: float) -> None:
        self.current[PHASES.index(name)] += seconds

    def table(self) -> np.ndarray:
        """(iterations, phases) seconds."""
        return np.array(self.rows).reshape(len(self.rows), len(PHASES))


def split_waiting(table: np.ndarray, compute_of_all: np.ndarray) -> np.ndarray:
    """Move each iteration's waiting out of the all-reduce column into ``wait``.

    Args:
        table: this rank's (iterations, phases) seconds.
        compute_of_all: (ranks, iterations) compute seconds of every training rank.
    """
    out = table.copy()
    compute, allreduce = PHASES.index("compute"), PHASES.index("allreduce")
    waited = np.clip(compute_of_all.max(axis=0) - out[:, compute], 0.0, out[:, allreduce])
    out[:, allreduce] -= waited
    out[:, PHASES.index("wait")] = waited
    return out
