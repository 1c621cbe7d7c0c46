"""Grid specs: an experiment spec whose knobs may be lists, expanded into single runs.

A list where the schema wants one value is a grid axis::

    schedulers: [{kind: herald, lookahead: [1, 2, 4]}]   # three herald entries
    cache: {ratio: [0.01, 0.1]}                         # two points
    seeds: [0, 1]                                       # every point twice

Scheduler knobs multiply the scheduler entries *within* a point; every other axis multiplies the
points; ``seeds`` (or a list under ``seed``) repeats every point. Where a field itself takes a list,
only a list of lists is an axis. Every point is validated as a whole :class:`ExperimentSpec`, so a
bad value is reported with the field's path and the point it belongs to. Each (point, seed,
scheduler) is one run; naive is added to every (point, seed) that lacks it, as the baseline of its
relative figures.

The number of runs is counted from the axes (:func:`count_runs`) before anything is expanded, and a
grid of more than ``max_runs`` (default :data:`MAX_RUNS`) is refused at once.
"""

from __future__ import annotations

import copy
import itertools
import math
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from heraldbench.platform.documents import check_document
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.model_fields import field_annotation as _field_annotation
from heraldbench.platform.model_fields import members as _members
from heraldbench.platform.model_fields import nested_model as _nested_model
from heraldbench.platform.schedulers import BASELINE, registered
from heraldbench.platform.spec import ExperimentSpec, parse_spec, scheduler_specs, spec_with

__all__ = [
    "MAX_RUNS", "Axis", "Grid", "GridPoint", "PlannedRun", "check_size", "comparison_baseline",
    "count_runs", "expand",
]

KeyPath = tuple[str, ...]

#: Grids beyond this many runs are refused: each is a Dask task and a database row, and admitting
#: one costs its validation and checks (about 0.1 ms each), which a refusal must not outgrow.
MAX_RUNS = 1_000


@dataclass(frozen=True)
class Axis:
    """One knob with several values: ``path`` like ``("cache", "ratio")``."""

    path: KeyPath
    values: tuple[Any, ...]

    @property
    def name(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True)
class GridPoint:
    """One combination of the non-scheduler axes."""

    index: int
    values: dict[str, Any]

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values.items()) or "default"


@dataclass(frozen=True)
class PlannedRun:
    """One (point, seed, scheduler): the unit of work of a Dask task.

    Attributes:
        spec: the run's effective spec: the point's values, the seed, this scheduler only.
        label: the scheduler's kind plus the knobs set away from their defaults.
        baseline_added: naive was added because the spec did not list it.
    """

    point: GridPoint
    seed: int
    spec: ExperimentSpec
    label: str
    baseline_added: bool
    #: A placement run (the spec's one entry of ``placements``), not a scheduler's.
    placement: bool = False

    @property
    def kind(self) -> str:
        return self.spec.placements[0].kind if self.placement else self.spec.schedulers[0].kind

    @property
    def actions(self) -> tuple[str, ...]:
        """Its tasks' actions: a placement is placed, a scheduler simulated; with ``mode:
        train`` both are trained too."""
        first = "place" if self.placement else "simulate"
        return (first, "train") if self.spec.mode == "train" else (first,)

    @property
    def is_baseline(self) -> bool:
        return self.kind == BASELINE

    @property
    def group(self) -> tuple[int, int]:
        """Runs of one group share a trace and a naive baseline."""
        return (self.point.index, self.seed)


@dataclass
class Grid:
    """A submitted spec, expanded."""

    name: str
    document: dict[str, Any]
    axes: list[Axis]
    scheduler_axes: list[str]
    seeds: list[int]
    points: list[GridPoint]
    runs: list[PlannedRun] = field(default_factory=list)


def count_runs(document: dict[str, Any]) -> int:
    """The runs ``document`` expands to (points x seeds x (schedulers, naive included, and
    placements)), counted from its axes without expanding anything.

    Raises:
        SpecError: the document is not a mapping, or its seeds or an axis are malformed.
    """
    if not isinstance(document, dict):
        raise SpecError(f"a spec must be a mapping of fields, got {type(document).__name__}")
    doc = dict(document)  # _seeds pops keys of the top level only
    seeds = len(_seeds(doc))
    points = math.prod(len(a.values) for a in _axes(doc, ExperimentSpec, ()))
    placements = doc.get("placements")
    placed = len(placements) if isinstance(placements, list) else 0
    entries = doc.get("schedulers")
    if not isinstance(entries, list):
        return points * seeds * (1 + placed)
    schedulers, has_baseline = 0, False
    for entry in entries:
        model = _scheduler_of(entry)
        if model is None:
            schedulers += 1
            continue
        schedulers += math.prod(len(a.values) for a in _axes(entry, model.spec_cls, ()))
        has_baseline = has_baseline or entry["kind"] == BASELINE
    return points * seeds * (schedulers + (0 if has_baseline else 1) + placed)


def check_size(document: dict[str, Any], max_runs: int = MAX_RUNS) -> int:
    """The number of runs of ``document``; raises :class:`SpecError` when over ``max_runs``."""
    runs = count_runs(document)
    if runs > max_runs:
        raise SpecError(
            f"the grid has {runs:,} runs (points x seeds x schedulers, naive included); at most "
            f"{max_runs:,} are accepted: use fewer values per axis, or several submissions"
        )
    return runs


def expand(
    document: dict[str, Any],
    max_runs: int = MAX_RUNS,
    admit: Callable[[Grid, PlannedRun], PlannedRun] | None = None,
) -> Grid:
    """Expand a grid spec into validated runs; raises :class:`SpecError` naming the field.

    A grid of more than ``max_runs`` runs is refused before anything is expanded. ``admit``
    sees each run and returns the run to keep (admission.py): the first point's runs as soon as
    they are made (what a whole grid shares is refused at once), the others once every point
    is validated (validation is the cheaper refusal).
    """
    check_size(document, max_runs)
    check_document(document)  # once, for every point and seed
    doc = copy.deepcopy(document)
    seeds = _seeds(doc)
    entries, scheduler_axes = _expand_schedulers(doc.get("schedulers"))
    doc["schedulers"] = entries
    axes = list(_axes(doc, ExperimentSpec, ()))
    points = [
        GridPoint(i, {a.name: v for a, v in zip(axes, values, strict=True)})
        for i, values in enumerate(itertools.product(*(a.values for a in axes)))
    ]
    grid = Grid(str(doc.get("name", "?")), document, axes, scheduler_axes, seeds, points)
    first: ExperimentSpec | None = None
    varying = sorted({a.path[0] for a in axes} | {"seed"})  # what differs between points
    for point in points:
        for seed in seeds:
            spec = _validate(
                _substitute(doc, axes, point, seed), point, seed, len(points), seeds, first,
                varying,
            )  # fmt: skip
            first = first or spec
            for run in _runs(point, seed, spec):
                early = admit is not None and point.index == 0 and seed == seeds[0]
                grid.runs.append(admit(grid, run) if early else run)  # type: ignore[misc]
    if admit is not None:
        done = sum(1 for r in grid.runs if r.point.index == 0 and r.seed == seeds[0])
        grid.runs[done:] = [admit(grid, run) for run in grid.runs[done:]]
    return grid


def _runs(point: GridPoint, seed: int, spec: ExperimentSpec) -> Iterator[PlannedRun]:
    """The runs of one (point, seed): each scheduler, then each placement. A run's spec holds
    its one entry (a placement's, the first scheduler too, so that it validates) and the
    baseline naive: the side-by-side baseline is the submission's (``comparison_baseline``)."""
    one = {"placements": [], "baseline": BASELINE}
    for sched, added in scheduler_specs(spec):
        run_spec = spec.model_copy(update={**one, "schedulers": [sched]})
        yield PlannedRun(point, seed, run_spec, sched.label(), added)
    for entry in spec.placements:
        run_spec = spec.model_copy(update={**one, "schedulers": spec.schedulers[:1],
                                           "placements": [entry]})
        yield PlannedRun(point, seed, run_spec, entry.label(), False, placement=True)


def comparison_baseline(document: dict[str, Any]) -> str:
    """The run a submission's side-by-side comparison is relative to (``baseline``)."""
    baseline = document.get("baseline", BASELINE)
    return baseline if isinstance(baseline, str) else BASELINE


def _seeds(doc: dict[str, Any]) -> list[int]:
    seeds = doc.pop("seeds", None)
    if seeds is not None and "seed" in doc:  # one would be silently dropped
        raise SpecError("seeds: give either seeds or seed, not both")
    if isinstance(doc.get("seed"), list):
        seeds = doc.pop("seed")
    if seeds is None:
        return [doc.pop("seed", 0)]
    if not isinstance(seeds, list) or not seeds:
        raise SpecError(f"seeds: give a non-empty list of seeds (got {seeds!r})")
    if len(set(map(repr, seeds))) != len(seeds):
        raise SpecError(f"seeds: a seed is listed twice (got {seeds!r})")
    return seeds


def _expand_schedulers(entries: Any) -> tuple[Any, list[str]]:
    """Scheduler entries with list knobs multiplied out, and the names of those knobs."""
    if not isinstance(entries, list):
        return entries, []
    expanded, names = [], []
    for entry in entries:
        model = _scheduler_of(entry)
        if model is None:  # validation reports the unknown kind
            expanded.append(entry)
            continue
        axes = list(_axes(entry, model.spec_cls, ()))
        names += [
            f"{entry['kind']}.{a.name}" for a in axes if f"{entry['kind']}.{a.name}" not in names
        ]
        for values in itertools.product(*(a.values for a in axes)):
            expanded.append(_replace(entry, axes, values))
    return expanded, names


def _scheduler_of(entry: Any) -> Any:
    """The registered scheduler an entry names, or None (validation reports the entry)."""
    kind = entry.get("kind") if isinstance(entry, dict) else None
    return registered().get(kind) if isinstance(kind, str) else None


def _axes(doc: dict[str, Any], model: type[BaseModel] | None, prefix: KeyPath) -> Iterator[Axis]:
    """Lists under ``doc`` where ``model``'s field wants one value (schedulers excluded)."""
    for key, value in doc.items():
        if prefix == () and key == "schedulers":
            continue
        annotation = _field_annotation(model, key)
        if annotation is None:
            continue  # unknown field: validation names it
        if isinstance(value, dict):
            yield from _axes(value, _nested_model(annotation, value), (*prefix, key))
        elif isinstance(value, list) and _is_axis(annotation, value):
            if not value:
                raise SpecError(f"{'.'.join((*prefix, key))}: an empty list of values")
            yield Axis((*prefix, key), tuple(value))


def _accepts_sequence(annotation: Any) -> bool:
    return any(
        typing.get_origin(m) in (list, tuple, set, frozenset) or m in (list, tuple)
        for m in _members(annotation)
    )


def _is_axis(annotation: Any, value: list[Any]) -> bool:
    if not _accepts_sequence(annotation):
        return True
    # a list-valued field: only a non-empty list of lists is an axis ([] is the empty value)
    return bool(value) and all(isinstance(v, list) for v in value)


def _replace(doc: dict[str, Any], axes: list[Axis], values: tuple[Any, ...]) -> dict[str, Any]:
    """``doc`` with each axis set to its value: only the mappings on an axis's path are copied
    (the rest is shared, never mutated), so expanding an axis of n values costs O(n), not O(n²).
    """
    doc = dict(doc)
    for axis, value in zip(axes, values, strict=True):
        target = doc
        for key in axis.path[:-1]:
            target[key] = dict(target[key])
            target = target[key]
        target[axis.path[-1]] = value
    return doc


def _substitute(doc, axes, point: GridPoint, seed: int) -> dict[str, Any]:
    values = tuple(point.values[a.name] for a in axes)
    return {**_replace(doc, axes, values), "seed": seed}


def _validate(
    doc, point: GridPoint, seed: int, num_points: int, seeds: list[int],
    first: ExperimentSpec | None = None, varying: list[str] | None = None,
) -> ExperimentSpec:
    """One (point, seed) of the grid; after the first, only the fields that vary are validated
    again (``spec_with``): a grid of n points costs n small validations, not n whole ones."""
    try:
        if first is None or varying is None:
            return parse_spec(doc)
        return spec_with(first, {field: doc[field] for field in varying if field in doc})
    except SpecError as exc:
        where = [
            f"point {point.label}" if num_points > 1 else "",
            f"seed {seed}" if len(seeds) > 1 else "",
        ]
        context = " and ".join(w for w in where if w)
        raise SpecError(f"{exc} (at {context})" if context else str(exc)) from exc
