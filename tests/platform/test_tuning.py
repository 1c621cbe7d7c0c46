"""The tuning section: what it accepts, and errors naming the field under tuning and the value."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.spec import load_spec, parse_spec
from heraldbench.platform.tuning import ConstraintSpec, ParamRange

ROOT = Path(__file__).resolve().parents[2]


def _spec(tuning: dict, **overrides) -> dict:
    data = {
        "name": "t",
        "dataset": {"kind": "synthetic-criteo", "samples": 1000, "scale": 0.01},
        "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
        "tuning": {
            "space": {"scheduler.lookahead": {"low": 1, "high": 8}},
            "objectives": ["traffic"],
            **tuning,
        },
    }
    data.update(overrides)
    return data


def _problems(data: dict) -> str:
    with pytest.raises(SpecError) as caught:
        parse_spec(data)
    return str(caught.value)


def test_the_example_study_loads_with_its_ranges_objectives_and_cap() -> None:
    spec = load_spec(ROOT / "examples" / "tune.yaml")
    tuning = spec.tuning
    assert tuning.space["scheduler.lookahead"].kind == "int"
    assert tuning.space["cache.ratio"].kind == "float" and tuning.space["cache.ratio"].log
    assert [o.metric for o in tuning.objectives] == ["traffic", "cache_memory"]
    assert tuning.directions == ["minimize", "minimize"]
    assert tuning.constraints[0].max == 128.0  # MiB, from "128MiB"
    assert (tuning.sampler.kind, tuning.sampler.seed) == ("tpe", 0)


def test_a_spec_with_tuning_survives_a_json_round_trip() -> None:
    """Trials get the study's spec as JSON: parsing it again must not change a value (a byte
    size converted twice would turn a 128 MiB cap into 0.0001 MiB)."""
    spec = parse_spec(
        _spec(
            {
                "space": {"cache.bytes": {"low": "1MiB", "high": "64MiB", "log": True}},
                "objectives": [
                    "traffic",
                    "cache_memory",
                    {"metric": "time", "profile": "rdma-100g"},
                ],
                "constraints": [{"metric": "cache_memory", "max": "32MiB"}],
            }
        )
    )
    assert spec.tuning.space["cache.bytes"].low == 2**20
    assert parse_spec(spec.model_dump(mode="json")) == spec


@pytest.mark.parametrize(
    ("tuning", "field", "value"),
    [
        (
            {"space": {"scheduler.lookahead": {"low": 1, "high": 5000}}},
            "tuning.space.scheduler.lookahead.high",
            "5000",
        ),
        (
            {"space": {"scheduler.bound": {"low": 1, "high": 5}}},
            "tuning.space.scheduler.bound",
            "bound",
        ),
        (
            {"space": {"cache.ratio": {"low": 0.01, "high": 2.0}}},
            "tuning.space.cache.ratio.high",
            "2.0",
        ),
        (
            {"space": {"cache.policy": {"choices": ["lru", "fifo"]}}},
            "tuning.space.cache.policy.choices.1",
            "fifo",
        ),
        ({"objectives": ["auc"]}, "tuning.objectives.0.metric", "auc"),
        (
            {"objectives": [{"metric": "time", "profile": "carrier-pigeon"}]},
            "tuning.objectives.0.profile",
            "carrier-pigeon",
        ),
        ({"pruning": {"kind": "median"}}, "tuning.pruning.kind", "median"),
        ({"scheduler": "het"}, "tuning.scheduler", "het"),
        ({"trials": 0}, "tuning.trials", "0"),
    ],
)
def test_a_bad_tuning_section_names_the_field_and_the_value(tuning, field, value) -> None:
    message = _problems(_spec(tuning))
    line = next(line for line in message.splitlines() if line.startswith(f"{field}:"))
    assert value in line


def test_a_float_range_over_an_integer_knob_is_refused_with_a_hint() -> None:
    message = _problems(_spec({"space": {"scheduler.lookahead": {"low": 1.0, "high": 8.0}}}))
    assert "tuning.space.scheduler.lookahead:" in message
    assert "integer" in message


def test_an_unknown_knob_lists_the_knobs_of_the_tuned_scheduler() -> None:
    message = _problems(_spec({"space": {"scheduler.window": {"low": 1, "high": 4}}}))
    assert "herald has no knob 'window'; its knobs: lookahead" in message


def test_two_candidate_schedulers_need_tuning_scheduler() -> None:
    data = _spec({}, schedulers=[{"kind": "herald"}, {"kind": "het"}])
    assert "tuning.scheduler: name the schedulers entry to tune" in _problems(data)
    data["tuning"]["scheduler"] = "herald"
    assert parse_spec(data).tuning.scheduler == "herald"


def test_training_metrics_and_pruning_need_train_mode_and_an_eval_interval() -> None:
    tuning = {"objectives": ["auc"], "pruning": {"kind": "median"}}
    assert "set train.eval_interval" in _problems(_spec(tuning, mode="train"))
    spec = parse_spec(_spec(tuning, mode="train", train={"eval_interval": 10}))
    assert spec.tuning.directions == ["maximize"]
    two = {"objectives": ["auc", "traffic"], "pruning": {"kind": "median"}}
    assert "one objective" in _problems(_spec(two, mode="train", train={"eval_interval": 10}))


@pytest.mark.parametrize(
    ("document", "words"),
    [
        ({"low": 1, "high": 8, "choices": [1, 2]}, "not both"),
        ({"low": 4, "high": 4}, "below high"),
        ({"low": 0, "high": 8, "log": True}, "low > 0"),
        ({"low": 1, "high": 8, "step": 2}, "multiple of step"),
        ({"low": 1, "high": 9, "step": 0.5}, "integer step"),
        ({"choices": [1, 1]}, "repeat"),
        ({"low": True, "high": 8}, "byte size"),
        ({"low": -1.7e308, "high": 1.7e308}, "finite"),
        ({"low": 0.0, "high": 8.98846567431158e307, "step": 0.5}, "multiple of step"),
    ],
)
def test_a_range_is_one_consistent_form(document, words) -> None:
    with pytest.raises(ValidationError, match=words):
        ParamRange.model_validate(document)


def test_two_cache_sizes_cannot_both_be_searched() -> None:
    space = {"cache.ratio": {"low": 0.01, "high": 0.1}, "cache.rows": {"low": 10, "high": 100}}
    assert "search one cache size" in _problems(_spec({"space": space}))


def test_a_constraint_violation_is_how_far_a_bound_is_missed() -> None:
    cap = ConstraintSpec.model_validate({"metric": "cache_memory", "max": "256MiB"})
    assert cap.max == 256.0
    assert cap.violation(100.0) < 0 and cap.violation(300.0) == pytest.approx(44.0)
    floor = ConstraintSpec.model_validate({"metric": "traffic", "min": 0.5, "max": 0.9})
    assert floor.violation(0.4) == pytest.approx(0.1) and floor.violation(0.7) < 0
    with pytest.raises(ValidationError, match="needs min or max"):
        ConstraintSpec.model_validate({"metric": "auc"})


# --- a placement study ---------------------------------------------------------------------


def _placement_spec(tuning: dict, **overrides) -> dict:
    data = _spec({"space": {"placement.hot_share": {"low": 0.1, "high": 0.9}}, **tuning},
                 cluster={"workers": 4, "hosts": 2, "devices_per_host": 2},
                 placements=[{"kind": "row-wise"}, {"kind": "flexshard"}])  # fmt: skip
    data["tuning"].setdefault("placement", "flexshard")
    data.update(overrides)
    return data


def test_a_placement_study_loads_and_names_its_entry() -> None:
    spec = parse_spec(_placement_spec({"objectives": ["traffic", "device_memory"]}))
    assert spec.tuning.placement == "flexshard"
    assert spec.tuning.directions == ["minimize", "minimize"]


@pytest.mark.parametrize(
    ("tuning", "field", "value"),
    [
        ({"space": {"placement.hot_share": {"low": 0.1, "high": 1.5}}},
         "tuning.space.placement.hot_share.high", "1.5"),
        ({"space": {"placement.shard_dim": {"low": 8, "high": 32}}},
         "tuning.space.placement.shard_dim", "shard_dim"),
        ({"space": {"placement.hot_share": {"low": 0.1, "high": 0.9},
                    "cache.ratio": {"low": 0.01, "high": 0.2}}},
         "tuning.space.cache.ratio", "cache.ratio"),
        ({"placement": "recshard"}, "tuning.placement", "recshard"),
        ({"objectives": ["cache_memory"]}, "tuning.objectives.0.metric", "cache_memory"),
        ({"objectives": [{"metric": "comm_time", "profile": "tcp-100g-overlap"}]},
         "tuning.objectives.0.profile", "tcp-100g-overlap"),
        ({"scheduler": "naive"}, "tuning.scheduler", "naive"),
    ],
)  # fmt: skip
def test_a_bad_placement_study_names_the_field_and_the_value(tuning, field, value) -> None:
    message = _problems(_placement_spec(tuning))
    line = next(line for line in message.splitlines() if line.startswith(f"{field}:"))
    assert value in line


def test_a_placement_study_without_a_named_entry_needs_one_of_several() -> None:
    data = _placement_spec({})
    del data["tuning"]["placement"]
    message = _problems(data)
    assert "tuning.placement: name the placements entry to tune" in message
    data["placements"] = [{"kind": "flexshard"}]  # the only one: tuned without naming it
    assert parse_spec(data).tuning.placement is None


def test_a_placement_study_trains_nothing() -> None:
    message = _problems(_placement_spec({}, mode="train", train={}))
    assert "tuning.placement: a placement study counts and models traffic" in message


def test_a_scheduler_study_does_not_measure_a_placement_s_metrics() -> None:
    message = _problems(_spec({"objectives": ["traffic", "load_balance"]}))
    assert "tuning.objectives.1.metric: a scheduler study measures" in message
