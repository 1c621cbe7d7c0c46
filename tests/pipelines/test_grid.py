"""Grid specs expand into validated runs; errors name the field and the point."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from heraldbench.pipelines.grid import _axes, expand
from heraldbench.platform.exceptions import SpecError

BASE = {
    "name": "grid",
    "dataset": {"kind": "synthetic-criteo", "samples": 1000, "scale": 0.01},
    "cluster": {"workers": 2, "batch_size": 8},
}


def grid(**fields):
    return expand({**BASE, **fields})


def test_scheduler_knob_lists_multiply_entries_within_a_point() -> None:
    g = grid(schedulers=[{"kind": "herald", "lookahead": [1, 2, 4]}])
    assert len(g.points) == 1 and g.scheduler_axes == ["herald.lookahead"]
    assert [r.label for r in g.runs] == [
        "naive",
        "herald",
        "herald lookahead=2",
        "herald lookahead=4",
    ]
    assert [r.spec.schedulers[0].kind for r in g.runs] == ["naive"] + ["herald"] * 3
    assert g.runs[0].baseline_added


def test_other_lists_make_points_and_seeds_repeat_them() -> None:
    g = grid(
        schedulers=[{"kind": "naive"}, {"kind": "het"}],
        cache={"ratio": [0.01, 0.1]},
        dataset={**BASE["dataset"], "samples": [500, 1000]},
        seeds=[0, 1],
    )
    assert [a.name for a in g.axes] == ["dataset.samples", "cache.ratio"]
    assert [p.label for p in g.points][:2] == [
        "dataset.samples=500, cache.ratio=0.01",
        "dataset.samples=500, cache.ratio=0.1",
    ]
    assert len(g.runs) == 4 * 2 * 2  # points × seeds × schedulers (naive listed: not added)
    run = next(r for r in g.runs if r.point.index == 3 and r.seed == 1 and r.kind == "het")
    assert (run.spec.dataset.samples, run.spec.cache.ratio, run.spec.seed) == (1000, 0.1, 1)
    assert len(run.spec.schedulers) == 1 and not any(r.baseline_added for r in g.runs)


def test_a_list_under_seed_is_a_seed_axis() -> None:
    g = grid(schedulers=[{"kind": "herald"}], seed=[3, 4])
    assert g.seeds == [3, 4] and {r.spec.seed for r in g.runs} == {3, 4}


def test_a_bad_value_names_its_field_and_point() -> None:
    with pytest.raises(SpecError, match=r"cache\.ratio: .*\(got 2\) \(at point cache\.ratio=2\)"):
        grid(schedulers=[{"kind": "herald"}], cache={"ratio": [0.1, 2]})
    with pytest.raises(SpecError, match=r"schedulers\.1\.herald\.lookahead: .*\(got 0\)"):
        grid(schedulers=[{"kind": "herald", "lookahead": [1, 0]}])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"seeds": []}, "non-empty list"),
        ({"seeds": [1, 1]}, "listed twice"),
        ({"seeds": [1], "seed": [2]}, "not both"),
        ({"seeds": [1], "seed": {}}, "not both"),  # was dropped unread
        ({"cache": {"ratio": []}}, "cache.ratio: an empty list"),
    ],
)
def test_malformed_grids_are_refused(fields, message) -> None:
    with pytest.raises(SpecError, match=message):
        grid(schedulers=[{"kind": "herald"}], **fields)


def test_a_field_that_takes_a_list_is_an_axis_only_for_a_list_of_lists() -> None:
    class Train(BaseModel):
        hidden: list[int] = [512, 256]
        lr: float = 0.1

    assert list(_axes({"hidden": [64, 32], "lr": 0.1}, Train, ())) == []
    axes = list(_axes({"hidden": [[64], [128, 64]], "lr": [0.1, 0.01]}, Train, ()))
    assert [(a.name, a.values) for a in axes] == [
        ("hidden", ([64], [128, 64])),
        ("lr", (0.1, 0.01)),
    ]


@pytest.mark.parametrize(
    "fields",
    [
        {"schedulers": [{"kind": "herald", "lookahead": [1, 2, 4]}]},
        {"schedulers": [{"kind": "naive"}, {"kind": "het", "bound": [0, 1]}], "seeds": [0, 1]},
        {
            "schedulers": [{"kind": "herald", "lookahead": [1, 2]}, {"kind": "fae"}],
            "cache": {"ratio": [0.01, 0.1]},
            "cluster": {"workers": [2, 4], "batch_size": 8},
            "seed": [3, 4, 5],
        },
    ],
)
def test_runs_are_counted_from_the_axes(fields) -> None:
    from heraldbench.pipelines.grid import count_runs

    document = {**BASE, **fields}
    assert count_runs(document) == len(expand(document).runs)


def test_a_grid_over_the_cap_is_refused_before_anything_is_expanded() -> None:
    """10^10 runs: expanding them would never end, counting them is arithmetic."""
    values = list(range(1, 101))
    huge = {
        **BASE,
        "cluster": {"workers": 2, "batch_size": values},
        "embedding_dim": values,
        "dataset": {**BASE["dataset"], "samples": [1000 + v for v in values]},
        "seeds": values,
        "schedulers": [{"kind": "herald", "lookahead": values}],
    }
    with pytest.raises(SpecError, match=r"10,100,000,000 runs.*at most 1,000"):
        expand(huge)
    small = {**BASE, "schedulers": [{"kind": "herald", "lookahead": [1, 2, 3]}]}
    with pytest.raises(SpecError, match="the grid has 4 runs"):
        expand(small, max_runs=3)
    assert len(expand(small, max_runs=4).runs) == 4
