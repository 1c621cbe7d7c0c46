"""Surgery on a trace: one kind of structure rearranged, the rest kept (benchmarks/
workload_surgery.py measures what each costs Herald's partition on real traces).

Every surgery keeps the order of samples, each block's class at each sample (head, new or
repeat: :mod:`._structure`) and how often each row is accessed; what it changes is which values
occur together:

- ``heads apart``: each block's head tuples permuted among that block's head draws, block by
  block (which head tuples occur together, and with what else, is lost).
- ``heads together``: each sample's head tuples, of every block at once, moved to another sample
  whose blocks draw head tuples in the same places (kept: which occur together; lost: with what
  else in the sample).
- ``heads in 32``: ``heads apart`` within windows of 32 samples (when each occurs is kept).
- ``entities' fields apart``: every block's non-head tuples (entities: new, then repeated) get
  values each taken, field by field, from another entity of the block that occurs as often;
  every occurrence of an entity changes alike, so entities recur as before but their fields
  are combined at random (a profile's new tuples draw their fields independently too).
- ``heads and entities' fields apart``: both of the above.
- ``fields apart``: every field permuted over the whole trace (the independent-fields model;
  this one keeps neither classes nor order of values).
"""

from __future__ import annotations

import numpy as np

from heraldbench.platform.data.workload._structure import HEAD, Structure

__all__ = ["surgeries"]

#: Samples within which ``heads in 32`` permutes.
WINDOW = 32


def surgeries(local: np.ndarray, structure: Structure, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each surgery's ids (table-local ids like ``local``, the trace ``structure`` was read from)."""
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


def _heads_apart(local, structure, heads, rng, window: int | None) -> np.ndarray:
    out = local.copy()
    for k, fields in enumerate(structure.blocks):
        rows = np.flatnonzero(heads[:, k])
        groups = np.zeros_like(rows) if window is None else rows // window
        moved = rows.copy()
        for g in np.unique(groups):
            picked = groups == g
            moved[picked] = rng.permutation(rows[picked])
        out[np.ix_(rows, fields)] = local[np.ix_(moved, fields)]
    return out


def _heads_together(local, structure, heads, rng) -> np.ndarray:
    out = local.copy()
    pattern = heads @ (np.int64(1) << np.arange(heads.shape[1], dtype=np.int64))
    for p in np.unique(pattern):
        fields = [f for k, fs in enumerate(structure.blocks) if (p >> k) & 1 for f in fs]
        if fields:
            rows = np.flatnonzero(pattern == p)
            out[np.ix_(rows, fields)] = local[np.ix_(rng.permutation(rows), fields)]
    return out


def _entity_fields_apart(local, structure, heads, rng) -> np.ndarray:
    out = local.copy()
    for k, fields in enumerate(structure.blocks):
        at = np.flatnonzero(~heads[:, k])
        tuples = structure.tuples[at, k]
        entities, first, occurrences = np.unique(tuples, return_index=True, return_counts=True)
        values = local[np.ix_(at[first], fields)]  # one row per entity
        mixed = values.copy()
        for j in range(len(fields)):  # from entities that occur as often: row counts are kept
            mixed[:, j] = values[_permuted_within(occurrences, rng), j]
        out[np.ix_(at, fields)] = mixed[np.searchsorted(entities, tuples)]
    return out


def _permuted_within(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation of ``range(len(groups))`` that maps each index to one of equal group."""
    order = np.argsort(groups, kind="stable")
    cuts = np.flatnonzero(np.diff(groups[order])) + 1
    moved = np.empty_like(order)
    for part in np.split(order, cuts):
        moved[part] = rng.permutation(part)
    return moved
