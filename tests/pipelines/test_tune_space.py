"""The pieces of a study without a cluster: drawing values, a trial's spec, pruning, the front.

Optuna studies here are real, in memory; the cluster-backed study is in test_tune_study.py.
"""

from __future__ import annotations

import optuna
import pytest

from heraldbench.pipelines.tune.results import TrialRow, best_rows, dominates
from heraldbench.pipelines.tune.space import (
    make_pruner,
    make_sampler,
    problem_document,
    redact,
    suggest,
    trial_document,
)
from heraldbench.pipelines.tune.trial import _reporter
from heraldbench.platform.spec import parse_spec

optuna.logging.set_verbosity(optuna.logging.WARNING)

DOCUMENT = {
    "name": "space",
    "dataset": {"kind": "synthetic-criteo", "samples": 1000, "scale": 0.005},
    "cluster": {"workers": 2, "batch_size": 16},
    "cache": {"ratio": 0.1, "policy": "lru"},
    "schedulers": [
        {"kind": "naive"},
        {"kind": "herald-plus", "affinity": 8, "direct_transfer": False},
    ],
    "tuning": {
        "space": {
            "scheduler.lookahead": {"low": 1, "high": 16, "log": True},
            "scheduler.replacement_window": {"choices": [0, 4, 16]},
            "cache.rows": {"low": 50, "high": 500, "step": 50},
            "cache.policy": {"choices": ["lru", "lfu"]},
        },
        "objectives": ["traffic", "cache_memory"],
        "trials": 4,
    },
}


def _drawn(seed: int, count: int = 5) -> list[dict]:
    spec = parse_spec(DOCUMENT)
    study = optuna.create_study(
        directions=spec.tuning.directions, sampler=make_sampler(spec.tuning.sampler, seed)
    )
    draws = []
    for _ in range(count):
        trial = study.ask()
        draws.append(suggest(trial, spec.tuning))
        study.tell(trial, [1.0, 1.0])
    return draws


def test_drawn_values_lie_in_their_ranges_with_their_types() -> None:
    for params in _drawn(seed=3):
        assert 1 <= params["scheduler.lookahead"] <= 16 and isinstance(
            params["scheduler.lookahead"], int
        )
        assert params["cache.rows"] in range(50, 501, 50)
        assert params["scheduler.replacement_window"] in (0, 4, 16)
        assert params["cache.policy"] in ("lru", "lfu")


def test_a_seed_fixes_the_draws_and_another_seed_changes_them() -> None:
    assert _drawn(seed=7) == _drawn(seed=7)
    assert _drawn(seed=7) != _drawn(seed=8)


def test_a_trial_runs_the_tuned_scheduler_alone_with_the_drawn_values() -> None:
    spec = parse_spec(DOCUMENT)
    params = {
        "scheduler.lookahead": 4,
        "scheduler.replacement_window": 16,
        "cache.rows": 150,
        "cache.policy": "lfu",
    }
    trial = parse_spec(trial_document(spec, params))
    assert trial.tuning is None and not trial.lower_bound
    (scheduler,) = trial.schedulers
    assert (scheduler.kind, scheduler.lookahead, scheduler.direct_transfer) == (
        "herald-plus",
        4,
        False,
    )
    assert scheduler.affinity == 8  # a knob not searched keeps the spec's value
    assert (trial.cache.rows, trial.cache.ratio, trial.cache.policy) == (150, None, "lfu")


def test_the_problem_ignores_what_may_change_between_runs_of_a_study() -> None:
    spec = parse_spec(DOCUMENT)
    rerun = parse_spec(
        {
            **DOCUMENT,
            "name": "other",
            "tuning": {**DOCUMENT["tuning"], "trials": 50, "sampler": {"seed": 9}},
        }
    )
    assert problem_document(rerun) == problem_document(spec)
    wider = {**DOCUMENT["tuning"], "space": {"cache.ratio": {"low": 0.01, "high": 0.5}}}
    assert problem_document(parse_spec({**DOCUMENT, "tuning": wider})) != problem_document(spec)


def test_a_storage_password_never_shows() -> None:
    shown = redact("postgresql+psycopg://bench:s3cret@db:5432/optuna")
    assert "s3cret" not in shown and "db:5432/optuna" in shown


def test_the_reporter_prunes_a_trial_worse_than_the_median_at_an_evaluation() -> None:
    """Steps are training iterations; an AUC below the earlier trials' at the same iteration
    stops the run (the trainer sees TrialPruned raised from its evaluation callback)."""
    spec = parse_spec(
        {
            **DOCUMENT,
            "mode": "train",
            "train": {"eval_interval": 10},
            "tuning": {
                **DOCUMENT["tuning"],
                "objectives": ["auc"],
                "pruning": {"kind": "median", "startup_trials": 1},
            },
        }
    )
    study = optuna.create_study(direction="maximize", pruner=make_pruner(spec.tuning.pruning, 10))
    seen = []
    log = type("Log", (), {"evaluation": lambda self, i, m: seen.append((i, m["auc"]))})()
    first = study.ask()
    _reporter(first, spec, log)(10, {"auc": 0.80, "logloss": 0.4})
    study.tell(first, 0.80)
    second = study.ask()
    report = _reporter(second, spec, log)
    with pytest.raises(optuna.TrialPruned, match="iteration 10"):
        report(10, {"auc": 0.70, "logloss": 0.5})
    assert second.should_prune() and seen == [(10, 0.80), (10, 0.70)]
    third = study.ask()
    _reporter(third, spec, log)(10, {"auc": 0.85, "logloss": 0.3})  # better: goes on


def _row(
    number: int, values: list[float], feasible: bool = True, state: str = "COMPLETE"
) -> TrialRow:
    return TrialRow(number=number, state=state, params={}, values=values, feasible=feasible)


def test_the_front_keeps_feasible_complete_trials_that_nothing_dominates() -> None:
    directions = ["minimize", "minimize"]
    rows = [
        _row(0, [0.9, 10.0]),
        _row(1, [0.8, 20.0]),
        _row(2, [0.85, 25.0]),  # dominated by 1
        _row(3, [0.7, 5.0], feasible=False),  # would dominate all, but breaks a constraint
        _row(4, [0.95, 2.0]),
        _row(5, [0.1, 1.0], state="PRUNED"),
    ]
    assert [r.number for r in best_rows(rows, directions)] == [1, 0, 4]
    assert dominates([0.8, 20.0], [0.85, 25.0], directions)
    assert not dominates([0.8, 20.0], [0.8, 20.0], directions)
    assert dominates([0.9], [0.8], ["maximize"]) and not dominates([0.8], [0.9], ["maximize"])
    single = best_rows([_row(0, [0.7]), _row(1, [0.9]), _row(2, [0.9])], ["maximize"])
    assert [r.number for r in single] == [1, 2]  # ties are all kept
