"""The decision stream: every iteration's decisions, for executors that move real rows.

:func:`decisions` is the one public state machine of the contract
(:mod:`heraldbench.platform.contract`): it asks the scheduler for its run plan and, per
iteration, its plan, and yields :class:`~heraldbench.platform.contract.IterationDecisions`. The
machine behind it is the one the simulator counts with (per-worker caches, or the oracle's
logically replicated cache where the plan asks for one), so an executor that carries the stream
out moves exactly the rows the simulator counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from heraldbench.platform.contract import IterationDecisions, OracleWindow, RunPlan
from heraldbench.platform.data import TraceSource
from heraldbench.platform.schedulers import Scheduler
from heraldbench.platform.sim._replicated_moves import Moves
from heraldbench.platform.sim._simulator import _Run

__all__ = ["IterationDecisions", "decisions"]


def decisions(
    trace: TraceSource,
    scheduler: Scheduler,
    *,
    cache_rows: int,
    policy: Literal["lru", "lfu", "lfuopt"] = "lru",
    consistency: Literal["strict", "optimistic"] = "strict",
    plan: RunPlan | None = None,
) -> Iterator[IterationDecisions]:
    """Yield the decisions of every iteration of ``scheduler`` on ``trace``, in order.

    Ids in the stream are those of the run plan's trace (not renumbered). ``plan`` is the
    scheduler's run plan for ``trace`` if the caller already has it.
    """
    plan = plan if plan is not None else scheduler.plan_run(trace)
    if plan.oracle is not None:
        yield from _replicated_decisions(plan.trace, scheduler, plan.oracle, cache_rows)
        return
    run = _Run(plan.trace, scheduler, plan, cache_rows, policy, consistency, False, False,
               log_sent=True)  # fmt: skip
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
            phase=run.phase_ring[slot],
            allreduce_rows=run.allreduce_ring[slot],
            version_checks=run.checks_ring[slot],
        )


def _replicated_decisions(trace: TraceSource, scheduler: Scheduler, oracle: OracleWindow,
                          cache_rows: int) -> Iterator[IterationDecisions]:  # fmt: skip
    """The stream of the logically replicated cache (BagPipe), from the machine that counts it."""
    from heraldbench.platform.sim._replicated import _Run as _ReplicatedRun

    moves = Moves(oracle.lookahead + 1, scheduler.workers)
    run = _ReplicatedRun(trace, scheduler, oracle, cache_rows, False, False, log=moves)
    for _ in run.steps():
        yield moves.decisions(trace.layout.total_rows)
