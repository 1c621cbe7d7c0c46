"""Surgery on a trace: one kind of structure rearranged, the rest kept (benchmarks/
workload_surgery.py measures what each costs Herald's partition on real traces).

Every surgery but the last keeps the order of samples, the place of each block's head draws,
new tuples and repeats (as read from the original trace by :mod:`._structure`) and how often
each row is accessed; what it changes is which values occur together:

- ``heads apart``: each block's head tuples permuted among that block's head draws, block by
  block (which head tuples occur together, and with what else, is lost).
- ``heads together``: each sample's head tuples, of every block at once, permuted among the
  samples whose blocks draw head tuples in the same places (kept: which occur together; lost:
  with what else in the sample). A sample alone with its places keeps its own.
- ``heads in 32``: ``heads apart`` within windows of 32 samples (when each occurs is kept).
- ``entities' fields apart``: every block's non-head tuples (entities: new, then repeated) get
  values each taken, field by field, from an entity of the block that occurs as often (so row
  counts are kept; an entity whose count no other has keeps its values); every occurrence of
  an entity changes alike, so entities recur as before but their fields are combined at random
  (a profile's new tuples draw their fields independently too).
- ``heads and entities' fields apart``: both of the above.
- ``fields apart``: every field permuted over the whole trace (the independent-fields model;
  it keeps each row's count and nothing else).
"""

from __future__ import annotations

import numpy as np

from heraldbench.platform.data.workload._structure import HEAD, Structure

__all__ = ["WINDOW", "real_head_combinations", "surgeries"]

#: Samples within which ``heads in 32`` permutes.
WINDOW = 32


def surgeries(
    local: np.ndarray, structure: Structure, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Each surgery's ids: table-local, like ``local``, the trace ``structure`` was read from."""
    heads = structure.classes == HEAD
    apart = _heads_apart(local, structure, heads, rng, window=None)
    return {
        "heads apart": apart,
        "heads together": _heads_together(local, structure, heads, rng),
        f"heads in {WINDOW}": _heads_apart(local, structure, heads, rng, window=WINDOW),
        "entities' fields apart": _entity_fields_apart(local, structure, heads, rng),
        "heads and entities' fields apart": _entity_fields_apart(apart, structure, heads, rng),
        "fields apart": np.stack([rng.permutation(column) for column in local.T], axis=1),
    }


def real_head_combinations(
    synthetic: np.ndarray, synthetic_heads: np.ndarray, real: np.ndarray, real_heads: np.ndarray,
    blocks: list[list[int]], ranks: list[dict[int, int]], rng: np.random.Generator,
) -> np.ndarray:  # fmt: skip
    """A profile's trace whose samples take their head tuples from real samples: each sample's
    from one real sample drawn uniformly among those that draw head tuples in the same blocks
    (among all real samples where none does; then only the blocks drawing head tuples in both
    change). Head tuples are then combined as the real trace combines them, independently of
    time: what a model of such combinations could reach. It reads the real trace, so it
    measures; it does not generate.

    Args:
        synthetic, real: table-local ids of the profile's trace and of the real one.
        synthetic_heads, real_heads: (n, K) which blocks draw head tuples at each sample, as read
            from each trace (``_structure``).
        blocks: the fields of each block (the profile's).
        ranks: per field, each real head value's rank: its table-local id in the profile's trace.
    """
    out = synthetic.copy()
    donors = _donors(_patterns(synthetic_heads), _patterns(real_heads), rng)
    lookups = [_lookup(rank) for rank in ranks]
    for k, fields in enumerate(blocks):
        rows = np.flatnonzero(synthetic_heads[:, k] & real_heads[donors, k])
        for f in fields:
            values = lookups[f][real[donors[rows], f]]
            if (values < 0).any():
                raise ValueError(f"field {f}: a real head value has no rank in the profile")
            out[rows, f] = values
    return out


def _patterns(heads: np.ndarray) -> np.ndarray:
    return heads @ (np.int64(1) << np.arange(heads.shape[1], dtype=np.int64))


def _donors(wanted: np.ndarray, real: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each wanted pattern, a real sample of that pattern drawn uniformly (any, if none)."""
    order = np.argsort(real, kind="stable")
    sorted_patterns = real[order]
    lo = np.searchsorted(sorted_patterns, wanted, side="left")
    hi = np.searchsorted(sorted_patterns, wanted, side="right")
    found = hi > lo
    picked = lo + (rng.random(len(wanted)) * np.maximum(hi - lo, 1)).astype(np.int64)
    anywhere = rng.integers(0, len(real), len(wanted))
    return np.where(found, order[np.minimum(picked, len(real) - 1)], anywhere)


def _lookup(ranks: dict[int, int]) -> np.ndarray:
    table = np.full(max(ranks, default=0) + 1, -1, np.int64)
    table[list(ranks)] = list(ranks.values())
    return table


def _heads_apart(local: np.ndarray, structure: Structure, heads: np.ndarray,
                 rng: np.random.Generator, window: int | None) -> np.ndarray:  # fmt: skip
    out = local.copy()
    for k, fields in enumerate(structure.blocks):
        rows = np.flatnonzero(heads[:, k])
        groups = np.zeros_like(rows) if window is None else rows // window
        moved = rows[_permuted_within(groups, rng)]
        out[np.ix_(rows, fields)] = local[np.ix_(moved, fields)]
    return out


def _heads_together(local: np.ndarray, structure: Structure, heads: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    out = local.copy()
    moved = _permuted_within(_patterns(heads), rng)
    for k, fields in enumerate(structure.blocks):
        rows = np.flatnonzero(heads[:, k])  # a sample moves within its pattern: k is head there
        out[np.ix_(rows, fields)] = local[np.ix_(moved[rows], fields)]
    return out


def _entity_fields_apart(local: np.ndarray, structure: Structure, heads: np.ndarray,
                         rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    out = local.copy()
    for k, fields in enumerate(structure.blocks):
        at = np.flatnonzero(~heads[:, k])
        _, first, which, occurrences = np.unique(
            structure.tuples[at, k], return_index=True, return_inverse=True, return_counts=True
        )
        values = local[np.ix_(at[first], fields)]  # one row per entity
        mixed = values.copy()
        for j in range(len(fields)):  # from entities that occur as often: row counts are kept
            mixed[:, j] = values[_permuted_within(occurrences, rng), j]
        out[np.ix_(at, fields)] = mixed[which.ravel()]
    return out


def _permuted_within(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation of ``range(len(groups))`` that maps each index to one of its own group."""
    order = np.argsort(groups, kind="stable")
    cuts = np.flatnonzero(np.diff(groups[order])) + 1
    moved = np.empty_like(order)
    for part in np.split(order, cuts):
        moved[part] = rng.permutation(part)
    return moved
