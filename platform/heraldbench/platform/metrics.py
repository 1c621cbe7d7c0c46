"""Counters of docs/semantics.md and the figures derived from them (totals, bytes, relative to naive)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

from heraldbench.platform.units import BYTES_PER_VALUE

__all__ = ["Counts", "relative_to", "ring_allreduce", "ring_rows", "ring_steps"]


def ring_steps(workers: int) -> int:
    """Steps of a ring all-reduce over ``workers`` workers: 2(W−1), a reduce-scatter then an
    all-gather of W−1 steps each; in each step every worker sends 1/W of the rows."""
    return 2 * (workers - 1)


def ring_allreduce(rows: int, workers: int) -> float:
    """Row-transfers of a ring all-reduce of ``rows`` rows over ``workers`` workers.

    Each worker sends (and receives) 2(W−1)/W of the rows (reduce-scatter then all-gather); like
    pulls and pushes, the counter sums over workers, so the total is 2(W−1)·rows. Counting the
    per-worker share alone would make an all-reduced row look W times cheaper than a pull.
    """
    return float(ring_steps(workers)) * rows


def ring_rows(row_transfers, workers: int):
    """The rows behind :func:`ring_allreduce`'s row-transfers (its inverse; one worker counts
    as two steps, so that no all-reduce divides by zero)."""
    return row_transfers / max(ring_steps(workers), 2)


@dataclass
class Counts:
    """Row transfers and lookups of one run (docs/semantics.md).

    ``accesses`` counts raw id accesses (duplicates included, a ragged table's pads not);
    ``lookups`` counts each worker's distinct ids per iteration, so
    ``lookups == hits + miss_pull + update_pull``.
    """

    accesses: int = 0
    lookups: int = 0
    hits: int = 0
    miss_pull: int = 0
    update_pull: int = 0
    evict_push: int = 0
    update_push: int = 0
    flush_push: int = 0
    allreduce: float = 0.0  # row-transfers summed over workers (see ring_allreduce)
    metadata: int = 0  # version-check messages (HET), not rows; never part of the totals

    @property
    def pull(self) -> int:
        return self.miss_pull + self.update_pull

    @property
    def push(self) -> int:
        return self.evict_push + self.update_push

    @property
    def overall(self) -> float:
        return self.pull + self.push + self.allreduce

    def as_dict(self) -> dict[str, int | float]:
        return asdict(self)

    def totals(self) -> dict[str, float]:
        return {"pull": self.pull, "push": self.push, "overall": self.overall}

    def bytes(self, embedding_dim: int) -> dict[str, float]:
        """Bytes moved per total, fp32 rows of ``embedding_dim`` values."""
        row = embedding_dim * BYTES_PER_VALUE
        return {name: value * row for name, value in self.totals().items()} | {
            "flush_push": self.flush_push * row
        }

    @classmethod
    def from_series(cls, totals: Mapping[str, float], *, accesses: int, flush_push: int,
                    lookups: int | None = None) -> Counts:  # fmt: skip
        """Counts from the totals of an executor's per-iteration series (named as the
        counters); ``lookups`` defaults to hits + miss_pull + update_pull."""
        rows = {f.name: int(totals.get(f.name, 0)) for f in fields(cls)
                if f.name not in ("accesses", "lookups", "flush_push", "allreduce")}
        if lookups is None:
            lookups = rows["hits"] + rows["miss_pull"] + rows["update_pull"]
        return cls(accesses=accesses, lookups=lookups, flush_push=flush_push,
                   allreduce=float(totals.get("allreduce", 0.0)), **rows)

    def __add__(self, other: Counts) -> Counts:
        return Counts(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


def relative_to(counts: Counts, baseline: Counts) -> dict[str, float | None]:
    """pull / push / overall of ``counts`` divided by the baseline's (None where it is zero)."""
    mine, base = counts.totals(), baseline.totals()
    return {name: (mine[name] / base[name] if base[name] else None) for name in mine}
