"""``heraldbench calibrate``: fit a workload profile to a trace (the model is :mod:`.model`).

The trace is read once (up to ``max_samples``); its blocks, classes and roots are read off by
:mod:`._structure`, every number of the profile is counted from them, and :mod:`.refine` then
corrects the few numbers whose generated effect differs from their count (how many new tuples
and new values come out, and the realized repeat distances) by simulating the profile and
comparing.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version

import numpy as np

from heraldbench.platform.data._trace import TraceSource
from heraldbench.platform.data.attributes import AttributeSource
from heraldbench.platform.data.workload import _structure as st
from heraldbench.platform.data.workload.attributes import fit_attribute
from heraldbench.platform.data.workload.given import fit_given
from heraldbench.platform.data.workload.labels import fit_dense, fit_labels
from heraldbench.platform.data.workload.refine import refine
from heraldbench.platform.data.workload.schema import (
    MAX_BINS,
    VERSION,
    BlockProfile,
    FieldProfile,
    HeadGiven,
    HeadTuples,
    Provenance,
    RootProfile,
    WorkloadProfile,
    significant,
)
from heraldbench.platform.exceptions import DataError

__all__ = ["TraceData", "fit_profile", "read_trace"]

#: Root levels fitted: a second shared source is rare in every trace measured (docs/workloads.md).
ROOT_LEVELS = 2
#: A tuple or value seen this often, spread over time, is a head draw (_structure.head_tuples):
#: enough occurrences for the spread over 16 windows to tell time-independent draws from bursts.
HEAD_MIN = 8


class TraceData:
    """A trace's first samples in memory: table-local ids, labels and dense features."""

    def __init__(self, trace: TraceSource, max_samples: int | None,
                 progress: Callable[[int, int], None] | None = None) -> None:  # fmt: skip
        limit = trace.num_samples if max_samples is None else min(max_samples, trace.num_samples)
        parts, labels, dense, read = [], [], [], 0
        for chunk in trace.chunks(1 << 16):
            chunk = chunk.slice(0, min(len(chunk), limit - read))
            parts.append(chunk.ids.astype(np.int64) - trace.layout.offsets)
            labels.append(chunk.labels)
            dense.append(chunk.dense)
            read += len(chunk)
            if progress:
                progress(read, limit)
            if read >= limit:
                break
        if not read:
            raise DataError("the trace has no samples to fit a profile to")
        self.ids = np.concatenate(parts)
        self.labels = np.concatenate(labels)
        self.dense = np.concatenate(dense)
        self.names = list(trace.layout.names)
        self.dense_names = [f"I{j + 1}" for j in range(self.dense.shape[1])]

    @property
    def samples(self) -> int:
        return len(self.ids)


def read_trace(trace: TraceSource, max_samples: int | None = None, progress=None) -> TraceData:
    return TraceData(trace, max_samples, progress)


def _version() -> str:
    try:
        return version("heraldbench")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def fit_profile(data: TraceData, *, name: str, source: str, source_kind: str, command: str = "",
                seed: int = 0, rounds: int = 4,
                attributes: Sequence[AttributeSource] = ()) -> WorkloadProfile:  # fmt: skip
    """The profile of ``data``, refined over ``rounds`` simulate-and-compare rounds, with the
    laws of the ``attributes`` tables over ``data``'s samples (:mod:`.attributes`)."""
    n = data.samples
    head_min = HEAD_MIN
    blocks = st.find_blocks(data.ids)
    structure = st.read_structure(data.ids, blocks, head_min, ROOT_LEVELS)
    ranks = st.head_values(data.ids, structure)
    profile = WorkloadProfile(
        name=name,
        provenance=Provenance(
            source=source, source_kind=source_kind, samples_read=n,
            fitted_at=_dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
            heraldbench_version=_version(), command=command,
        ),  # fmt: skip
        reference_samples=n,
        fields=_fields(data, structure, ranks),
        blocks=_blocks(data, structure, ranks),
        roots=_roots(structure),
        dense=fit_dense(data.dense, data.dense_names),
        labels=fit_labels(data.labels, data.dense, data.ids, data.names, blocks),
    )
    profile = refine(profile, data, structure, seed=seed, rounds=rounds)
    fitted = [fit_attribute(a, data.ids[:, data.names.index(a.parent)], seed) for a in attributes]
    return profile.model_copy(update={"attributes": fitted, "version": VERSION}) if fitted \
        else profile


def _pmf(counts: np.ndarray) -> list[float]:
    total = counts.sum()
    if total <= 0:
        return [1.0]
    pmf = np.trim_zeros(counts / total, "b")
    return [significant(float(p)) for p in pmf / pmf.sum()]


def _distance_pmf(distances: np.ndarray, samples: int) -> list[float]:
    """The law of a distance, corrected for the trace's finite length and continued beyond it.

    A distance d can only be seen at the samples after the first d, so each log2 bin's count is
    divided by the share of samples that can see it; bins the trace cannot see well (fewer than
    ``2**-1.5`` of its samples) are continued with the mean growth per bin of the last four seen
    well (kept within [0.5, 2]: 2 is a distance spread evenly over the whole past), up to
    distances of 2**(MAX_BINS - 1). Modelling assumption: recurrence is scale-free beyond the
    fitted length; the generator conditions the law on the history a sample has.
    """
    counts = st.log2_histogram(np.asarray(distances), MAX_BINS)
    if counts.sum() <= 0:
        return [1.0]
    centres = 1.5 * np.exp2(np.arange(MAX_BINS))
    visible = np.clip((samples - centres) / samples, 0.0, 1.0)
    seen = np.flatnonzero(visible >= 2**-1.5)
    last = int(seen.max()) if len(seen) else 0
    corrected = np.zeros(MAX_BINS)
    corrected[: last + 1] = counts[: last + 1] / np.maximum(visible[: last + 1], 1e-12)
    window = [b for b in range(max(0, last - 3), last + 1) if corrected[b] > 0]
    if len(window) >= 2:
        growth = (corrected[window[-1]] / corrected[window[0]]) ** (1.0 / (window[-1] - window[0]))
        growth = min(max(growth, 0.5), 2.0)
        for b in range(last + 1, MAX_BINS):
            corrected[b] = corrected[b - 1] * growth
    return _pmf(corrected)


def _probabilities(values: np.ndarray) -> list[float]:
    total = values.sum()
    return [significant(float(v)) for v in values / total] if total > 0 else []


def _blocks(data: TraceData, s: st.Structure, ranks: list[dict[int, int]]) -> list[BlockProfile]:
    """Every block, each with its head tuples given its parent block's (:mod:`.given`)."""
    rows = np.full(s.classes.shape, -1, np.int64)
    heads = [_head_tuples(s, k, rows[:, k]) for k in range(len(s.blocks))]
    given = fit_given(rows)
    return [_block(data, s, k, ranks, samples, counts, given[k])
            for k, (samples, counts) in enumerate(heads)]  # fmt: skip


def _head_tuples(s: st.Structure, k: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Block k's head tuples, most frequent first: a sample holding each, and their counts;
    each sample's head tuple is written to ``rows`` as a row of that order (-1: none)."""
    heads = s.classes[:, k] == st.HEAD
    _, first, inverse, counts = np.unique(s.tuples[heads, k], return_index=True,
                                          return_inverse=True, return_counts=True)  # fmt: skip
    order = np.argsort(-counts, kind="stable")
    row_of = np.empty_like(order)
    row_of[order] = np.arange(len(order))
    rows[heads] = row_of[inverse.ravel()]
    return np.flatnonzero(heads)[first][order], counts[order]


def _block(data: TraceData, s: st.Structure, k: int, ranks: list[dict[int, int]],
           samples: np.ndarray, counts: np.ndarray,
           given: HeadGiven | None) -> BlockProfile:  # fmt: skip
    n = data.samples
    classes = s.classes[:, k]
    fields = s.blocks[k]
    taken = s.follows[:, :, k].any(axis=1)
    own = (classes == st.REPEAT) & ~taken
    head_share = float((classes == st.HEAD).mean())
    follow = []
    for level in range(s.root.shape[1]):
        free = (classes == st.REPEAT) & ~s.follows[:, :level, k].any(axis=1) & (s.root[:, level] >= 0)
        follow.append(significant(float(s.follows[free, level, k].mean())) if free.any() else 0.0)
    head_tuples = HeadTuples(
        ranks=[[ranks[f][int(data.ids[t, f])] for f in fields] for t in samples],
        probability=_probabilities(counts.astype(np.float64)),
    )
    return BlockProfile(
        fields=[data.names[f] for f in fields],
        new_tuples=[round(v, 3) for v in st.growth_knots(np.flatnonzero(classes == st.NEW), n)],
        head_share=significant(head_share if head_tuples.ranks else 0.0),
        repeat_distance=_distance_pmf(np.flatnonzero(own) - s.source[own, k], n),
        follow=follow,
        head_tuples=head_tuples,
        given=given,
    )


def _roots(s: st.Structure) -> list[RootProfile]:
    roots = []
    for level in range(s.root.shape[1]):
        has = s.root[:, level] >= 0
        distances = np.flatnonzero(has) - s.root[has, level]
        roots.append(RootProfile(rate=significant(float(has.mean())),
                                 distance=_distance_pmf(distances, len(s.root))))
    return roots


def _fields(data: TraceData, s: st.Structure, ranks: list[dict[int, int]]) -> list[FieldProfile]:
    out = []
    shares = st.old_head_shares(data.ids, s, ranks)
    for k, fields in enumerate(s.blocks):
        new_rows = np.flatnonzero(s.classes[:, k] == st.NEW)
        for f in fields:
            out.append((f, _field(data, f, new_rows, ranks[f], shares[f])))
    return [profile for _, profile in sorted(out, key=lambda pair: pair[0])]


def _field(data: TraceData, f: int, new_rows: np.ndarray, ranks: dict[int, int],
           old_head_share: float) -> FieldProfile:  # fmt: skip
    column = data.ids[:, f]
    first_seen = _first_positions(column)
    previous = _previous_positions(column)
    marginal = np.zeros(len(ranks))
    new_events, cold_distances = [], []
    for j, t in enumerate(new_rows):
        value = int(column[t])
        rank = ranks.get(value)
        if rank is not None:
            marginal[rank] += 1
        elif first_seen[value] == t:
            new_events.append(j)
        else:
            cold_distances.append(t - previous[t])
    if marginal.sum() == 0 and ranks:  # never reused in a new tuple: its overall counts
        values, counts = np.unique(column, return_counts=True)
        for v, c in zip(values, counts, strict=True):
            if int(v) in ranks:
                marginal[ranks[int(v)]] = c
    return FieldProfile(
        name=data.names[f],
        head=_probabilities(marginal),
        new_values=[round(v, 3) for v in st.growth_knots(np.asarray(new_events), max(len(new_rows), 1))],
        old_head_share=significant(old_head_share) if np.isfinite(old_head_share) else 1.0,
        old_value_distance=_distance_pmf(np.asarray(cold_distances), len(column)),
    )


def _first_positions(column: np.ndarray) -> dict[int, int]:
    values, first = np.unique(column, return_index=True)
    return dict(zip(values.tolist(), first.tolist(), strict=True))


def _previous_positions(column: np.ndarray) -> np.ndarray:
    order = np.argsort(column, kind="stable")
    previous = np.full(len(column), -1, np.int64)
    same = column[order[1:]] == column[order[:-1]]
    previous[order[1:][same]] = order[:-1][same]
    return previous
