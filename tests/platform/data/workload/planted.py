"""A workload profile with a planted structure, built by hand (no real data), for the tests."""

from __future__ import annotations

from heraldbench.platform.data.workload.schema import (
    BlockProfile,
    DenseFeature,
    FieldProfile,
    HeadGiven,
    HeadTuples,
    LabelModel,
    Provenance,
    RootProfile,
    WorkloadProfile,
)

SAMPLES = 8_000
#: The planted blocks: an entity of three fields, a pair, a head-only field and a growing one.
BLOCKS = [["U1", "U2", "U3"], ["P1", "P2"], ["X"], ["Y"]]
NEW_RATE = {"U1 U2 U3": 0.35, "P1 P2": 0.15, "X": 0.0, "Y": 0.20}
HEAD_SHARE = {"U1 U2 U3": 0.15, "P1 P2": 0.20, "X": 1.0, "Y": 0.30}
#: Planted head tuples that go together (``planted_profile(given=True)``): P's given U's, and Y's
#: given P's (a chain); parent rows not listed draw on their own.
GIVEN = {
    "P1 P2": HeadGiven(block=0, parent_tuples=[0, 0, 1, 2, 2], tuples=[0, 3, 1, 2, 3],
                       probability=[0.9, 0.1, 1.0, 0.7, 0.3]),
    "Y": HeadGiven(block=1, parent_tuples=[0, 1, 1], tuples=[0, 1, 4],
                    probability=[1.0, 0.5, 0.5]),
}  # fmt: skip


def _linear(rate: float, length: int = SAMPLES) -> list[float]:
    """A growth curve of ``rate`` events per position up to ``length``."""
    knots, i = [], 0
    while 2**i <= 2 * length:
        knots.append(round(rate * 2**i, 3))
        i += 1
    return knots


def _pmf(bins: dict[int, float]) -> list[float]:
    out = [0.0] * (max(bins) + 1)
    for b, p in bins.items():
        out[b] = p
    total = sum(out)
    return [p / total for p in out]


def _field(name: str, heads: int, new_per_tuple: float, old_head_share: float) -> FieldProfile:
    head = [1.0 / (r + 1) for r in range(heads)]
    total = sum(head)
    return FieldProfile(
        name=name, head=[h / total for h in head], new_values=_linear(new_per_tuple),
        old_head_share=old_head_share, old_value_distance=_pmf({6: 1, 9: 2, 11: 1}),
    )  # fmt: skip


def planted_profile(name: str = "planted", given: bool = False) -> WorkloadProfile:
    fields = [
        _field("U1", 3, 1.0, 1.0), _field("U2", 3, 0.7, 0.5), _field("U3", 3, 0.5, 0.8),
        _field("P1", 4, 1.0, 1.0), _field("P2", 4, 0.6, 0.9),
        _field("X", 12, 0.0, 1.0), _field("Y", 5, 1.0, 1.0),
    ]  # fmt: skip
    head_tuples = {
        "U1 U2 U3": HeadTuples(ranks=[[0, 0, 0], [1, 1, 1], [2, 2, 2]], probability=[0.6, 0.3, 0.1]),
        "P1 P2": HeadTuples(ranks=[[0, 0], [1, 1], [2, 3], [3, 2]], probability=[0.4, 0.3, 0.2, 0.1]),
        "X": HeadTuples(ranks=[[r] for r in range(12)], probability=[1 / 12] * 12),
        "Y": HeadTuples(ranks=[[r] for r in range(5)], probability=[0.2] * 5),
    }  # fmt: skip
    follow = {"U1 U2 U3": [0.9, 0.0], "P1 P2": [0.8, 0.0], "X": [0.0, 0.0], "Y": [0.5, 0.0]}
    blocks = [
        BlockProfile(
            fields=fields_, new_tuples=_linear(NEW_RATE[" ".join(fields_)]),
            head_share=HEAD_SHARE[" ".join(fields_)],
            repeat_distance=_pmf({1: 1, 3: 2, 5: 3, 7: 2}), follow=follow[" ".join(fields_)],
            head_tuples=head_tuples[" ".join(fields_)],
            given=GIVEN.get(" ".join(fields_)) if given else None,
        )  # fmt: skip
        for fields_ in BLOCKS
    ]
    return WorkloadProfile(
        name=name,
        provenance=Provenance(source="planted by the tests", source_kind="planted",
                              samples_read=SAMPLES, fitted_at="2026-11-25T00:00:00+00:00",
                              heraldbench_version="test"),  # fmt: skip
        reference_samples=SAMPLES,
        fields=fields,
        blocks=blocks,
        roots=[RootProfile(rate=0.40, distance=_pmf({3: 1, 7: 1, 10: 1})),
               RootProfile(rate=0.0, distance=[1.0])],  # fmt: skip
        dense=[DenseFeature(name="I1", quantiles=[0.0, 0.5, 1.0, 2.0, 5.0])],
        labels=LabelModel(click_rate=0.25, dense_weights=[0.8], field_effect_std={"P1": 0.7}),
    )
