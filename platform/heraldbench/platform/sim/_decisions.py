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

from heraldbench.platform.contract import IterationDecisions, OracleWindow, Read, RunPlan, Send
from heraldbench.platform.data import TraceSource
from heraldbench.platform.exceptions import InvariantViolation
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
    """The copies direct transfers parked, per row a bitmask of their senders, and the hand-overs
    they make at the row's next touches (the rule is the contract's: IterationDecisions)."""

    def __init__(self) -> None:
        self.senders: dict[int, int] = {}

    def __bool__(self) -> bool:
        return bool(self.senders)

    def park(self, dec: IterationDecisions) -> None:
        """Park the copies this iteration sent by direct transfer (after its reads)."""
        direct = dec.sent_how == Send.DIRECT
        for k, v in zip(dec.sent_ids[direct].tolist(), dec.sent_w[direct].tolist()):
            self.senders[k] = self.senders.get(k, 0) | (1 << v)

    def hand_over(self, dec: IterationDecisions) -> dict[str, np.ndarray]:
        """The ``handed_*`` fields of ``dec`` (empty: none). A touch of a parked row by a worker
        other than its sender (or by a sender that pulls it) is served by its senders: the first
        is the base of a reader that pulls; the first reader of each parked copy carries its
        delta; handed copies are no longer parked."""
        records: list[tuple[int, int, int, bool, bool]] = []
        parked = np.fromiter(self.senders, np.int64, len(self.senders))
        touched = np.flatnonzero(np.isin(dec.touched_ids, parked))
        handed: set[tuple[int, int]] = set()
        for i in touched.tolist():
            self._hand_over_to(int(dec.touched_ids[i]), int(dec.touched_w[i]),
                               int(dec.touched_kind[i]) != Read.HIT, handed, records)
        for k, s in handed:
            left = self.senders[k] & ~(1 << s)
            if left:
                self.senders[k] = left
            else:
                del self.senders[k]
        if not records:
            return {}
        columns = list(zip(*records))
        return {
            "handed_ids": np.array(columns[0], np.int64),
            "handed_from": np.array(columns[1], np.int64),
            "handed_to": np.array(columns[2], np.int64),
            "handed_base": np.array(columns[3], bool),
            "handed_carry": np.array(columns[4], bool),
        }

    def _hand_over_to(self, k: int, w: int, pulls: bool, handed: set[tuple[int, int]],
                      records: list) -> None:  # fmt: skip
        mask, first = self.senders[k], True
        for s in range(mask.bit_length()):
            if not mask >> s & 1 or (s == w and not pulls):
                continue
            base, carry = pulls and first, (k, s) not in handed
            if base or carry:  # else nothing travels: the reader keeps an optimistic copy
                records.append((k, s, w, base, carry))
                handed.add((k, s))
            first = False


def _replicated_decisions(trace: TraceSource, scheduler: Scheduler, oracle: OracleWindow,
                          cache_rows: int) -> Iterator[IterationDecisions]:  # fmt: skip
    """The stream of the logically replicated cache (BagPipe), from the machine that counts it."""
    from heraldbench.platform.sim._replicated import _Run as _ReplicatedRun

    moves = Moves(oracle.lookahead + 1, scheduler.workers)
    run = _ReplicatedRun(trace, scheduler, oracle, cache_rows, False, False, log=moves)
    for _ in run.steps():
        yield moves.decisions(trace.layout.total_rows)
