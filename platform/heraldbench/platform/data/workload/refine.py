"""Simulate-and-correct: make a fitted profile's generated trace count what the real one counts.

Some numbers act on the trace through the generator's other decisions: a slot that falls on a
sample some root already fills brings no new tuple, a repeat lands closer than drawn when the
tuple recurred in between, a tuple repeated often looks like a head tuple, a cold value copied
into a new tuple may be a head value. Each round generates the profile at the fitted length, reads
it with the same :mod:`._structure` code as the real trace, and scales four sets of numbers by
real / generated: every block's new tuples and head share, every field's new values, and every
bin of every block's repeat distance; every field's head coin of old values is solved for the
share of head values its new tuples take (:func:`_solved_coin`). The fit figures
(:func:`fit_figures`) are measured on the last round's trace.
"""

from __future__ import annotations

import numpy as np

from heraldbench.platform.data.workload import _structure as st
from heraldbench.platform.data.workload._stream import fill_ids
from heraldbench.platform.data.workload.model import compile_profile
from heraldbench.platform.data.workload.schema import MAX_BINS, WorkloadProfile, significant
from heraldbench.platform.data.workload.stats import describe_ids, miss_ratio_curve
from heraldbench.platform.data.workload.trace import _ring, _scratch

__all__ = ["fit_figures", "generate_ids", "refine"]

#: No single round scales a number by more than this factor either way.
_STEP = 2.0


def generate_ids(profile: WorkloadProfile, samples: int, seed: int) -> np.ndarray:
    """Table-local ids of ``samples`` samples of the profile's trace, (samples, F) int64."""
    kernels = compile_profile(profile, seed=seed)
    out = np.empty((samples, len(profile.fields)), np.int32)
    local = np.zeros(len(profile.fields), np.int32)
    fill_ids(0, out, _ring(len(profile.fields)), kernels, *_scratch(kernels), local)
    return out.astype(np.int64)


class _Targets:
    def __init__(self, ids: np.ndarray, structure: st.Structure) -> None:
        self.new = _new_tuples(structure)
        self.head = (structure.classes == st.HEAD).mean(axis=0)
        self.new_values = _cold_values(ids, structure.head_min)
        self.repeats = _repeat_histograms(structure)
        self.old_head = st.old_head_shares(ids, structure, st.head_values(ids, structure))


def refine(profile: WorkloadProfile, data, structure: st.Structure, *, seed: int,
           rounds: int) -> WorkloadProfile:  # fmt: skip
    """``profile`` after ``rounds`` corrections against ``data`` (read as ``structure``)."""
    target = _Targets(data.ids, structure)
    for r in range(rounds):
        ids = generate_ids(profile, data.samples, seed + 1000 + r)
        got = _Targets(ids, st.read_structure(ids, structure.blocks, structure.head_min, 1))
        profile = _corrected(profile, target, got)
    ids = generate_ids(profile, data.samples, seed + 1000 + rounds)
    return profile.model_copy(update={"fit": fit_figures(data.ids, ids, structure)})


def _new_tuples(s: st.Structure) -> np.ndarray:
    return (s.classes == st.NEW).sum(axis=0).astype(np.float64)


def _cold_values(ids: np.ndarray, head_min: int) -> np.ndarray:
    """Per field, distinct values seen fewer than ``head_min`` times."""
    out = np.empty(ids.shape[1])
    for f in range(ids.shape[1]):
        _, counts = np.unique(ids[:, f], return_counts=True)
        out[f] = (counts < head_min).sum()
    return out


def _repeat_histograms(s: st.Structure) -> np.ndarray:
    hists = np.zeros((len(s.blocks), MAX_BINS))
    for k in range(len(s.blocks)):
        rows = np.flatnonzero(s.classes[:, k] == st.REPEAT)
        hists[k] = st.log2_histogram(rows - s.source[rows, k], MAX_BINS)
    return hists


def _ratio(want: np.ndarray, got: np.ndarray) -> np.ndarray:
    ratio = np.where(got > 0, want / np.maximum(got, 1e-12), 1.0)
    return np.clip(ratio, 1.0 / _STEP, _STEP)


def _corrected(profile: WorkloadProfile, target: _Targets, got: _Targets) -> WorkloadProfile:
    new_ratio = _ratio(target.new, got.new)
    head_ratio = _ratio(target.head, got.head)
    value_ratio = _ratio(target.new_values, got.new_values)
    blocks = []
    for k, block in enumerate(profile.blocks):
        update = {"new_tuples": _scaled_curve(block.new_tuples, new_ratio[k]),
                  "head_share": significant(min(block.head_share * head_ratio[k], 1.0))}  # fmt: skip
        if target.repeats[k].sum() > 0 and got.repeats[k].sum() > 0:
            update["repeat_distance"] = _reweighted(block.repeat_distance, target.repeats[k],
                                                    got.repeats[k])  # fmt: skip
        blocks.append(block.model_copy(update=update))
    fields = []
    for f, field in enumerate(profile.fields):
        coin = _solved_coin(field.old_head_share, target.old_head[f], got.old_head[f])
        new_values = _scaled_curve(field.new_values, value_ratio[f])
        fields.append(field.model_copy(update={"new_values": new_values, "old_head_share": coin}))
    return WorkloadProfile.model_validate(
        {**profile.model_dump(), "blocks": [b.model_dump() for b in blocks],
         "fields": [f.model_dump() for f in fields]}  # fmt: skip
    )


def _solved_coin(coin: float, want: float, got: float) -> float:
    """The head coin of a field's old values that gives the head share ``want``, where ``coin``
    gave ``got``. Modelling assumption: the generated share is coin + (1 - coin) * q, q the share
    of head values among the cold values copied from earlier samples (their copies bring head
    values on top of the coin), and q does not depend on the coin."""
    if not (np.isfinite(want) and np.isfinite(got)) or coin >= 1.0:
        return coin
    copied = min(max((got - coin) / (1.0 - coin), 0.0), 0.999)
    return significant(min(max((want - copied) / (1.0 - copied), 0.0), 1.0))


def _scaled_curve(knots: list[float], ratio: float) -> list[float]:
    """``knots`` times ``ratio``, never growing faster than one event per position."""
    out = [min(float(knots[0] * ratio), 1.0)]
    for i in range(1, len(knots)):
        step = float((knots[i] - knots[i - 1]) * ratio)
        out.append(out[-1] + min(step, 2.0 ** (i - 1)))
    return [round(v, 3) for v in out]


def _reweighted(pmf: list[float], want: np.ndarray, got: np.ndarray) -> list[float]:
    p = np.zeros(MAX_BINS)
    p[: len(pmf)] = pmf
    w, g = want / want.sum(), got / got.sum()
    factor = np.where(g > 0, w / np.maximum(g, 1e-12), np.where(w > 0, _STEP, 1.0))
    p *= np.clip(factor, 1.0 / _STEP, _STEP)
    if p.sum() <= 0:
        return list(pmf)
    p = np.trim_zeros(p / p.sum(), "b")
    return [significant(v) for v in p / p.sum()]


def fit_figures(real: np.ndarray, synthetic: np.ndarray, structure: st.Structure) -> dict:
    """Real against generated: headline figures, per-field distinct values, the miss-ratio curve
    and the block classes (plain numbers only)."""
    offsets = np.concatenate([[0], np.cumsum(np.maximum(real.max(axis=0), synthetic.max(axis=0)) + 1)[:-1]])
    real_g, syn_g = real + offsets, synthetic + offsets
    distinct = len(np.unique(real_g))
    syn_structure = st.read_structure(synthetic, structure.blocks, structure.head_min, 1)
    return {
        "real": describe_ids(real_g),
        "synthetic": describe_ids(syn_g),
        "distinct_per_field": {
            "real": [int(len(np.unique(real[:, f]))) for f in range(real.shape[1])],
            "synthetic": [int(len(np.unique(synthetic[:, f]))) for f in range(real.shape[1])],
        },
        "miss_ratio_curve": {
            "real": _rounded(miss_ratio_curve(real_g, distinct)),
            "synthetic": _rounded(miss_ratio_curve(syn_g, distinct)),
        },
        "block_classes": {
            "real": _class_shares(structure),
            "synthetic": _class_shares(syn_structure),
        },
        "head_min": structure.head_min,
    }


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in values.items()}


def _class_shares(s: st.Structure) -> dict[str, list[float]]:
    return {
        name: [round(float(v), 4) for v in (s.classes == code).mean(axis=0)]
        for name, code in (("head", st.HEAD), ("new", st.NEW), ("repeat", st.REPEAT))
    }
