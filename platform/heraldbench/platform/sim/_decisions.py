"""The decision stream: every iteration's decisions, for executors that move real rows.

The trainer replays this stream: who trains which samples, which rows each worker pulls (and
why), which copies it evicts, and which dirty copies leave for the PS or another worker after the
iteration. The stream comes from the same state machine the simulator counts with, so an executor
that carries it out moves exactly the rows the simulator counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np

from heraldbench.platform.data import SampleChunk, TraceSource
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.schedulers import Scheduler
from heraldbench.platform.sim._kernels import TOUCH_HIT, TOUCH_MISS, TOUCH_UPDATE
from heraldbench.platform.sim._simulator import _Run
from heraldbench.platform.sim._sync import SENT_DIRECT, SENT_EVICT, SENT_UPDATE

__all__ = [
    "SENT_DIRECT",
    "SENT_EVICT",
    "SENT_UPDATE",
    "TOUCH_HIT",
    "TOUCH_MISS",
    "TOUCH_UPDATE",
    "IterationDecisions",
    "decisions",
]


@dataclass(frozen=True)
class IterationDecisions:
    """Everything decided for one iteration, in the order an executor carries it out.

    Attributes:
        batch: the global batch's samples.
        assign: (W·m,) worker of each sample.
        replicated: the batch is served by the replicated table (FAE hot batch).
        touched_ids, touched_w, touched_kind: each worker's distinct rows in touch order, with
            TOUCH_HIT / TOUCH_MISS / TOUCH_UPDATE.
        evicted_ids, evicted_w: copies evicted while reading (write-back, if dirty, is in sent).
        sent_ids, sent_w, sent_how: dirty copies that left their worker: SENT_EVICT during the
            reads, SENT_UPDATE (to the PS) or SENT_DIRECT (to the row's next reader) after the
            iteration's update.
    """

    iteration: int
    batch: SampleChunk
    assign: np.ndarray
    replicated: bool
    touched_ids: np.ndarray
    touched_w: np.ndarray
    touched_kind: np.ndarray
    evicted_ids: np.ndarray
    evicted_w: np.ndarray
    sent_ids: np.ndarray
    sent_w: np.ndarray
    sent_how: np.ndarray


def decisions(
    trace: TraceSource,
    scheduler: Scheduler,
    *,
    cache_rows: int,
    policy: Literal["lru", "lfu", "lfuopt"] = "lru",
    consistency: Literal["strict", "optimistic"] = "strict",
) -> Iterator[IterationDecisions]:
    """Yield the decisions of every iteration of ``scheduler`` on ``trace``, in order."""
    if scheduler.executor() is not None:
        raise SpecError(
            f"scheduler {scheduler.kind!r} runs on its own executor and has no decision stream"
        )
    run = _Run(scheduler.prepare(trace), scheduler, cache_rows, policy, consistency, False,
               False, log_sent=True)
    for iteration in run.completed_iterations():
        slot = iteration % len(run.ring)
        rec = run.ring[slot]
        sent = int(rec.sent_n[0])
        yield IterationDecisions(
            iteration=iteration,
            batch=run.batch_ring[slot],  # type: ignore[arg-type]
            assign=run.assign_ring[slot],  # type: ignore[arg-type]
            replicated=run.replicated_ring[slot],
            touched_ids=rec.touched_ids[: rec.n_touched].copy(),
            touched_w=rec.touched_w[: rec.n_touched].copy(),
            touched_kind=rec.touched_kind[: rec.n_touched].copy(),
            evicted_ids=rec.evicted_ids[: rec.n_evicted].copy(),
            evicted_w=rec.evicted_w[: rec.n_evicted].copy(),
            sent_ids=rec.sent_ids[:sent].copy(),
            sent_w=rec.sent_w[:sent].copy(),
            sent_how=rec.sent_how[:sent].copy(),
        )
