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
from dataclasses import replace
from typing import Literal

import numpy as np

from heraldbench.platform._sorted import find_sorted
from heraldbench.platform.contract import IterationDecisions, OracleWindow, Read, RunPlan, Send
from heraldbench.platform.data import TraceSource
from heraldbench.platform.exceptions import InvariantViolation, SpecError
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
    if run.transient_rows:
        raise SpecError(
            f"{scheduler.kind} with variant: released and the {run.policy} policy keeps rows "
            f"beyond its cache's rows between their read and their update (HET's released "
            f"LFU and LFUOpt), which the trainers' caches cannot: simulate it, or train with "
            f"the lru policy"
        )
    parked = ParkedRows()
    for dec in _per_worker_decisions(run):
        handed = parked.hand_over(dec) if parked else None
        if handed:
            if dec.replicated:  # no scheduler combines the two: its executors would skip them
                raise InvariantViolation(f"iteration {dec.iteration}: hand-overs in a batch "
                                         "served by replicated rows")
            dec = replace(dec, **handed)
        parked.park(dec)
        yield dec


def _per_worker_decisions(run: _Run) -> Iterator[IterationDecisions]:
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


class ParkedRows:
    """The rows direct transfers parked, each with its one sender (a direct transfer needs the
    row's only dirty copy), and the hand-overs they make at the row's next pulls (the rule is
    the contract's: IterationDecisions)."""

    def __init__(self) -> None:
        self.rows = np.zeros(0, np.int64)  # sorted
        self.senders = np.zeros(0, np.int64)

    def __bool__(self) -> bool:
        return bool(self.rows.size)

    def park(self, dec: IterationDecisions) -> None:
        """Park the copies this iteration sent by direct transfer (after its reads)."""
        direct = dec.sent_how == Send.DIRECT
        if not direct.any():
            return
        rows, senders = dec.sent_ids[direct].astype(np.int64), dec.sent_w[direct].astype(np.int64)
        at, known = find_sorted(self.rows, rows)
        if (self.senders[at[known]] != senders[known]).any() or np.unique(rows).size < rows.size:
            raise InvariantViolation(f"iteration {dec.iteration}: a row parked by two workers")
        rows, senders = np.concatenate([self.rows, rows[~known]]), np.concatenate(
            [self.senders, senders[~known]])  # a sender parking its row again keeps one entry
        order = np.argsort(rows, kind="stable")
        self.rows, self.senders = rows[order], senders[order]

    def hand_over(self, dec: IterationDecisions) -> dict[str, np.ndarray]:
        """The ``handed_*`` fields of ``dec`` (empty: none): each pull of a parked row takes its
        sender's copy; the first (in record order) carries its delta; handed rows are no
        longer parked. A sender that only hits its row keeps it parked."""
        at, known = find_sorted(self.rows, dec.touched_ids.astype(np.int64))
        touched = np.flatnonzero(known)
        senders = self.senders[at[touched]]
        pulls = dec.touched_kind[touched] != Read.HIT
        if (~pulls & (dec.touched_w[touched] != senders)).any():
            raise InvariantViolation(f"iteration {dec.iteration}: a worker hits a row whose only "
                                     "dirty copy is parked elsewhere")
        touched, senders = touched[pulls], senders[pulls]
        if not touched.size:
            return {}
        rows = dec.touched_ids[touched].astype(np.int64)
        carry = np.zeros(rows.size, bool)
        carry[np.unique(rows, return_index=True)[1]] = True
        keep = ~np.isin(self.rows, rows)
        self.rows, self.senders = self.rows[keep], self.senders[keep]
        return {"handed_ids": rows, "handed_from": senders,
                "handed_to": dec.touched_w[touched].astype(np.int64), "handed_carry": carry,
                "handed_at": touched.astype(np.int64)}


def _replicated_decisions(trace: TraceSource, scheduler: Scheduler, oracle: OracleWindow,
                          cache_rows: int) -> Iterator[IterationDecisions]:  # fmt: skip
    """The stream of the logically replicated cache (BagPipe), from the machine that counts it."""
    from heraldbench.platform.sim._replicated import _Run as _ReplicatedRun

    moves = Moves(oracle.lookahead + 1, scheduler.workers)
    run = _ReplicatedRun(trace, scheduler, oracle, cache_rows, False, False, log=moves)
    for _ in run.steps():
        yield moves.decisions(trace.layout.total_rows)
