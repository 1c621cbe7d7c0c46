"""The per-iteration counters every trainer records, and the one mapping from decisions to them.

A sibling of :mod:`~heraldbench.platform.contract`: the contract says what each decision is; this
module says what each decision counts as (docs/semantics.md). The simulator's kernels count the
same kinds as :class:`~heraldbench.platform.contract.Series`; the emulated and the distributed
trainers count them with :func:`tally_of`, so all three executors count by one rule.
"""

from __future__ import annotations

import enum

import numpy as np

from heraldbench.platform.contract import IterationDecisions, Read, Send, Series
from heraldbench.platform.data.ragged import real_ids

__all__ = ["TALLY", "Tally", "tally_of"]


class Tally(enum.IntEnum):
    """Per-iteration counters of the trainers: the simulator's :class:`Series` columns first,
    then direct transfers, reads of outdated copies, prefetch pulls (a part of ``MISS_PULL``
    that no lookup asked for), and the ids the batch's samples read (pads of ragged tables left
    out)."""

    HITS = Series.HITS
    MISS_PULL = Series.MISS_PULL
    UPDATE_PULL = Series.UPDATE_PULL
    EVICT_PUSH = Series.EVICT_PUSH
    UPDATE_PUSH = Series.UPDATE_PUSH
    ALLREDUCE = Series.ALLREDUCE
    METADATA = Series.METADATA
    DIRECT = len(Series)
    STALE_READS = len(Series) + 1
    PREFETCH = len(Series) + 2
    ACCESSES = len(Series) + 3


#: Names of the per-iteration counters, in :class:`Tally` order.
TALLY = tuple(column.name.lower() for column in Tally)


def tally_of(dec: IterationDecisions, workers: int) -> np.ndarray:
    """One iteration's :class:`Tally` counters, read off its decisions.

    Every executor moves exactly these rows: a read is a hit, a miss pull or an update pull by
    its kind, and a prefetch is a miss pull when issued; an evicted or released copy is an evict
    push, a copy pushed after the update an update push, a parked copy a direct transfer (no
    push); a phase switch pulls the replicated rows on every worker and pushes one replica
    back. Stale reads are the executor's to count (``STALE_READS`` is left 0).
    """
    tally = np.zeros(len(TALLY))
    kinds, how = dec.touched_kind, dec.sent_how
    tally[Tally.HITS] = np.count_nonzero(kinds == Read.HIT)
    tally[Tally.MISS_PULL] = np.count_nonzero(kinds == Read.MISS) + dec.prefetch_ids.size
    tally[Tally.PREFETCH] = dec.prefetch_ids.size
    tally[Tally.UPDATE_PULL] = np.count_nonzero(kinds == Read.UPDATE)
    tally[Tally.EVICT_PUSH] = np.count_nonzero((how == Send.EVICT) | (how == Send.RELEASE))
    tally[Tally.UPDATE_PUSH] = np.count_nonzero(how == Send.UPDATE)
    tally[Tally.DIRECT] = np.count_nonzero(how == Send.DIRECT)
    tally[Tally.ALLREDUCE] = dec.allreduce(workers)
    tally[Tally.METADATA] = dec.version_checks
    batch = dec.batch
    tally[Tally.ACCESSES] = real_ids(batch.lengths, len(batch), batch.ids.shape[1])
    if dec.phase is not None:
        tally[Tally.MISS_PULL] += dec.phase.pulls(workers)
        tally[Tally.UPDATE_PUSH] += dec.phase.pushes()
    return tally
