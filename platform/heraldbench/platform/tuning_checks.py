"""A spec's ``tuning`` section checked against the rest of the spec: which entry a study tunes,
whether each searched knob exists and both ends of its range are valid, and whether each metric
is one that study measures. Every problem is located at its field under ``tuning``.

A study tunes one ``schedulers`` entry (``scheduler.<knob>`` and ``cache.<field>``) or one
``placements`` entry (``placement.<knob>``), never both: a placement has no cache, and a trial
measures one run.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from heraldbench.platform.schedulers import BASELINE
from heraldbench.platform.timemodel import PROFILES
from heraldbench.platform.tuning import (
    METRICS,
    PLACEMENT,
    SCHEDULER,
    TIMED,
    ParamRange,
    TuningSpec,
    tunes_placement,
)

__all__ = ["check_tuning", "tuned_entry", "tuned_placement"]


def check_tuning(spec: Any) -> None:
    """Check ``spec.tuning`` against the spec it sits in (an ``ExperimentSpec``).

    Raises:
        ValidationError: one error per problem, located at its field under ``tuning``.
    """
    tuning: TuningSpec = spec.tuning
    problems: list[InitErrorDetails] = []
    if tunes_placement(tuning):
        _check_placement_study(spec, tuning, problems)
    else:
        _check_scheduler_study(spec, tuning, problems)
    _check_metrics(spec, tuning, problems)
    if problems:
        raise ValidationError.from_exception_data("ExperimentSpec", problems)


def _problem(loc: tuple[Any, ...], message: str, value: Any) -> InitErrorDetails:
    return InitErrorDetails(
        type=PydanticCustomError("tuning", "{reason}", {"reason": message}),
        loc=("tuning", *loc),
        input=value,
    )


# --- a scheduler study -----------------------------------------------------------------------


def tuned_entry(spec: Any) -> Any:
    """The ``schedulers`` entry a scheduler study tunes (a spec that passed
    :func:`check_tuning` has exactly one)."""
    return _candidates(spec, spec.tuning)[0]


def _candidates(spec: Any, tuning: TuningSpec) -> list[Any]:
    """The entries of the kind ``tuning.scheduler`` names, else every entry but the baseline
    (naive itself when it is the only one)."""
    if tuning.scheduler is not None:
        return [s for s in spec.schedulers if s.kind == tuning.scheduler]
    return [s for s in spec.schedulers if s.kind != BASELINE] or list(spec.schedulers)


def _check_scheduler_study(spec: Any, tuning: TuningSpec, problems: list) -> None:
    entry = _checked_entry(spec, tuning, problems)
    for name, rng in tuning.space.items():
        group, _, field = name.partition(".")
        if group == SCHEDULER and entry is not None:
            _check_knob(entry, field, name, rng, problems)
        elif group == "cache":
            _check_cache(spec.cache, field, name, rng, problems)


def _checked_entry(spec: Any, tuning: TuningSpec, problems: list[InitErrorDetails]) -> Any:
    kinds = [s.kind for s in spec.schedulers]
    candidates = _candidates(spec, tuning)
    if tuning.scheduler is not None and len(candidates) != 1:
        how = "is not in" if not candidates else "is listed more than once in"
        message = f"{how} schedulers ({kinds})"
        problems.append(_problem(("scheduler",), message, tuning.scheduler))
        return None
    if len(candidates) != 1:
        message = f"name the schedulers entry to tune ({kinds})"
        problems.append(_problem(("scheduler",), message, None))
        return None
    return candidates[0]


def _check_knob(entry: Any, knob: str, name: str, rng: ParamRange, problems: list) -> None:
    knobs = [k for k in type(entry).model_fields if k != "kind"]
    _check_entry_knob(entry, entry.model_dump(), knobs, knob, name, rng, problems)


def _check_entry_knob(entry: Any, document: dict[str, Any], knobs: list[str], knob: str,
                      name: str, rng: ParamRange, problems: list) -> None:  # fmt: skip
    """``knob`` must be one of the entry's ``knobs``, and the entry (``document``, its fields)
    valid with it at both ends of its range and at every choice."""
    if knob not in knobs:
        message = f"{entry.kind} has no knob {knob!r}; its knobs: {', '.join(knobs) or 'none'}"
        problems.append(_problem(("space", name), message, knob))
        return
    for where, value in rng.probes():
        try:
            type(entry).model_validate({**document, knob: value})
        except ValidationError as exc:
            hint = "" if where else " (a float range: give integer ends for an integer knob)"
            problems.append(_problem(("space", name, *where), _first(exc) + hint, value))


def _check_cache(cache: Any, field: str, name: str, rng: ParamRange, problems: list) -> None:
    size = {k: getattr(cache, k) for k in ("rows", "bytes", "ratio") if getattr(cache, k)}
    for where, value in rng.probes():
        document = {**size, "policy": value} if field == "policy" else {field: value}
        try:
            type(cache).model_validate(document)
        except ValidationError as exc:
            problems.append(_problem(("space", name, *where), _first(exc), value))


def _first(exc: ValidationError) -> str:
    return exc.errors()[0]["msg"]


# --- a placement study -----------------------------------------------------------------------


def tuned_placement(spec: Any) -> Any:
    """The ``placements`` entry a placement study tunes (a spec that passed
    :func:`check_tuning` has exactly one)."""
    return _placement_candidates(spec, spec.tuning)[0]


def _placement_candidates(spec: Any, tuning: TuningSpec) -> list[Any]:
    """The entries whose kind or label ``tuning.placement`` names, else every entry."""
    if tuning.placement is None:
        return list(spec.placements)
    return [p for p in spec.placements if tuning.placement in (p.kind, p.label())]


def _check_placement_study(spec: Any, tuning: TuningSpec, problems: list) -> None:
    for name in tuning.space:
        if not name.startswith(PLACEMENT + "."):
            message = ("a study tunes one scheduler or one placement: with placement.<knob> "
                       "searched, scheduler and cache fields cannot be")  # fmt: skip
            problems.append(_problem(("space", name), message, name))
    if tuning.scheduler is not None:
        message = "a placement study tunes tuning.placement, not a scheduler"
        problems.append(_problem(("scheduler",), message, tuning.scheduler))
    if spec.mode == "train":
        message = ("a placement study counts and models traffic and trains nothing (a placement "
                   "does not change what is learned): set mode: simulate")  # fmt: skip
        problems.append(_problem(("placement",), message, spec.mode))
    entry = _checked_placement(spec, tuning, problems)
    if entry is None:
        return
    for name, rng in tuning.space.items():
        group, _, knob = name.partition(".")
        if group == PLACEMENT:
            _check_placement_knob(entry, knob, name, rng, problems)


def _checked_placement(spec: Any, tuning: TuningSpec, problems: list) -> Any:
    labels = [p.label() for p in spec.placements]
    candidates = _placement_candidates(spec, tuning)
    if len(candidates) == 1:
        return candidates[0]
    if tuning.placement is not None:
        how = "is not in" if not candidates else "names more than one of"
        message = f"{how} placements ({labels}); give a kind or label listed once"
        problems.append(_problem(("placement",), message, tuning.placement))
    elif not candidates:
        message = "a placement study needs a placements entry to tune; the spec lists none"
        problems.append(_problem(("placement",), message, None))
    else:
        message = f"name the placements entry to tune ({labels})"
        problems.append(_problem(("placement",), message, None))
    return None


def _check_placement_knob(entry: Any, knob: str, name: str, rng: ParamRange,
                          problems: list) -> None:  # fmt: skip
    from heraldbench.platform.placement_spec import knob_defaults

    knobs = list(knob_defaults(entry.kind))
    document = {"kind": entry.kind, **entry.knobs()}
    _check_entry_knob(entry, document, knobs, knob, name, rng, problems)


# --- the metrics -----------------------------------------------------------------------------


def _check_metrics(spec: Any, tuning: TuningSpec, problems: list[InitErrorDetails]) -> None:
    study = PLACEMENT if tunes_placement(tuning) else SCHEDULER
    measured = [m for m, info in METRICS.items() if study in info.studies]
    for section, refs in (("objectives", tuning.objectives), ("constraints", tuning.constraints)):
        for i, ref in enumerate(refs):
            where = (section, i, "metric")
            if study not in METRICS[ref.metric].studies:
                message = f"a {study} study measures {', '.join(measured)}"
                problems.append(_problem(where, message, ref.metric))
            elif METRICS[ref.metric].train_only and spec.mode != "train":
                message = f"{ref.metric} is measured by training: set mode: train"
                problems.append(_problem(where, message, ref.metric))
            elif study == PLACEMENT and ref.metric in TIMED and PROFILES[ref.profile].overlap:
                message = ("a placement's communication is modelled without overlap: give a "
                           "profile without -overlap")  # fmt: skip
                problems.append(_problem((section, i, "profile"), message, ref.profile))
    _check_pruning(spec, tuning, problems)


def _check_pruning(spec: Any, tuning: TuningSpec, problems: list[InitErrorDetails]) -> None:
    if tuning.pruning.kind == "none":
        return
    objective = tuning.objectives[0].metric
    if spec.mode != "train" or len(tuning.objectives) > 1 or objective not in ("auc", "logloss"):
        message = "pruning needs mode: train and one objective, auc or logloss"
        problems.append(_problem(("pruning", "kind"), message, tuning.pruning.kind))
    elif spec.train is None or spec.train.eval_interval < 1:
        message = "pruning acts at evaluations: set train.eval_interval >= 1"
        problems.append(_problem(("pruning", "kind"), message, tuning.pruning.kind))
