"""What a submission must pass before anything is stored or run, for every way in.

The service's experiments, validations and studies and the command line's ``run`` and ``tune``
all go through :func:`admit_grid` or :func:`admit_study`, in this order:

1. the document as a whole: no lone surrogate, no integer beyond 64 bits (documents.py);
2. its size: a grid over the run cap is refused from its axes, before anything is expanded;
3. validation of every point (the spec models; reading no file);
4. the files it names, confined to the data folders when :attr:`Admission.paths` is set (the
   service's; the command line reads its user's own files): paths.py;
5. what each run needs: its files readable, its batch within its cache, its memory within what
   a worker has (limits.py, resources.py). A study is checked at the ends of its search space.

Every refusal is a :class:`~heraldbench.platform.exceptions.SpecError` naming the field.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from heraldbench.pipelines.grid import Grid, PlannedRun, expand
from heraldbench.platform.documents import check_document
from heraldbench.platform.exceptions import SpecError, SpecFieldError
from heraldbench.platform.paths import PathPolicy, named_files
from heraldbench.platform.spec import ExperimentSpec, parse_spec

__all__ = ["Admission", "admit_grid", "admit_study"]

#: A study's space is checked at every combination of its entries' extremes up to this many.
_MAX_COMBINATIONS = 256


@dataclass(frozen=True)
class Admission:
    """Where a submission comes from.

    Attributes:
        paths: the data folders every file it names must lie under (None: no confinement).
        memory: bytes one run may use (None: this machine's memory).
    """

    paths: PathPolicy | None = None
    memory: int | None = None

    def confined(self, spec: ExperimentSpec) -> ExperimentSpec:
        return spec if self.paths is None else self.paths.confine_spec(spec)  # type: ignore[return-value]


def admit_grid(document: Any, admission: Admission) -> Grid:
    """Expand and check a (grid) spec; its runs name their files as confined, absolute paths.

    Each run is checked as soon as it is expanded, so a refusal costs the runs before it only.

    Raises:
        SpecError: naming the field (and the point, in a grid).
    """
    return expand(document, admit=_RunAdmission(admission))  # the run cap from its axes first


class _RunAdmission:
    """Steps 4 and 5 of the module docstring for each run of a grid, each distinct file
    confined and each dataset's facts read once, each distinct run checked once."""

    def __init__(self, admission: Admission) -> None:
        self.admission = admission
        self.files: dict[Any, ExperimentSpec] = {}
        self.facts: dict[Any, Any] = {}
        self.checked: set[Any] = set()

    def __call__(self, grid: Grid, run: PlannedRun) -> PlannedRun:
        spec = self._confined(run.spec)
        if _checked_as(spec) not in self.checked:
            self._check(grid, run, spec)
            self.checked.add(_checked_as(spec))
        return replace(run, spec=spec)

    def _confined(self, spec: ExperimentSpec) -> ExperimentSpec:
        key = (spec.dataset, spec.time_profile)  # frozen models: hashable
        if key not in self.files:
            self.files[key] = self.admission.confined(spec)
        files = self.files[key]
        if files.dataset is spec.dataset and files.time_profile == spec.time_profile:
            return spec
        return spec.model_copy(update={"dataset": files.dataset, "time_profile": files.time_profile})

    def _check(self, grid: Grid, run: PlannedRun, spec: ExperimentSpec) -> None:
        from heraldbench.platform.limits import check_runnable, dataset_facts

        where = f" (at point {run.point.label})" if len(grid.points) > 1 else ""
        try:
            if spec.dataset not in self.facts:
                self.facts[spec.dataset] = dataset_facts(spec.dataset)
            entry = _entry_of(grid.document, spec.schedulers[0].kind)
            placed = [_entry_of(grid.document, run.kind, "placements")] if run.placement else None
            check_runnable(spec, self.facts[spec.dataset], self.admission.memory,
                           entries=[entry], placement_entries=placed)
        except SpecFieldError as exc:
            for problem in exc.problems:
                problem["message"] += where
            raise
        except SpecError as exc:
            raise SpecError(f"{exc}{where}") from None


def _checked_as(spec: ExperimentSpec) -> tuple[Any, ...]:
    """What the checks of a run depend on (all but its name, seed and tuning section)."""
    values = (getattr(spec, f) for f in _checked_fields())
    return tuple(tuple(v) if isinstance(v, list) else v for v in values)


@lru_cache(maxsize=1)
def _checked_fields() -> tuple[str, ...]:
    return tuple(f for f in ExperimentSpec.model_fields if f not in _UNCHECKED)


_UNCHECKED = frozenset({"name", "seed", "tuning"})


def _entry_of(document: dict[str, Any], kind: str, section: str = "schedulers") -> str:
    """Where a run's scheduler (or placement) is in the submitted document (``schedulers.1``)."""
    entries = document.get(section)
    if isinstance(entries, list):
        for index, entry in enumerate(entries):
            if isinstance(entry, dict) and entry.get("kind") == kind:
                return f"{section}.{index}"
    return section


def admit_study(document: Any, admission: Admission) -> tuple[ExperimentSpec, dict[str, Any]]:
    """Check a spec with a tuning section; returns it and the document to store and run, whose
    file fields hold the confined paths.

    Raises:
        SpecError: naming the field.
    """
    from heraldbench.pipelines.tune.space import trial_document, tuning_spec
    from heraldbench.platform.limits import check_runnable, dataset_facts

    check_document(document)
    spec = admission.confined(tuning_spec(document))
    facts = dataset_facts(spec.dataset)
    check_runnable(spec, facts, admission.memory)
    for params in _extremes(spec):
        trial = parse_spec({**trial_document(spec, params), "lower_bound": False})
        try:
            check_runnable(trial, facts, admission.memory)
        except SpecError as exc:
            raise _at_trial(exc, params) from None
    return spec, _with_files(document, spec)


def _at_trial(exc: SpecError, params: dict[str, Any]) -> SpecFieldError:
    """A trial's refusal, located at the search-space entry that drives it: the one whose
    field the refusal names, else the first."""
    problems = getattr(exc, "problems", None) or [{"field": None, "message": str(exc)}]
    named = str(problems[0].get("field") or "")
    entry = next((n for n in params if n.split(".")[-1] in named.split(".")), next(iter(params)))
    message = f"a trial at {_shown(params)} cannot run: {problems[0]['message']}"
    return SpecFieldError([{"field": f"tuning.space.{entry}", "message": message,
                            "value": params[entry]}])  # fmt: skip


def _extremes(spec: ExperimentSpec) -> list[dict[str, Any]]:
    """Trial parameters at the ends of the space: every combination of each entry's probes
    (range ends, choices) up to :data:`_MAX_COMBINATIONS`, else each probe alone."""
    probes = {name: [v for _, v in rng.probes()[:2]] if rng.choices is None else rng.choices
              for name, rng in spec.tuning.space.items()}  # fmt: skip
    names = list(probes)
    combinations = 1
    for values in probes.values():
        combinations *= len(values)
    if combinations <= _MAX_COMBINATIONS:
        return [dict(zip(names, values)) for values in itertools.product(*probes.values())]
    return [{name: value} for name in names for value in probes[name]]


def _shown(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _with_files(document: dict[str, Any], spec: ExperimentSpec) -> dict[str, Any]:
    """``document`` with each file field (:func:`named_files`) set to the spec's value."""
    stored = dict(document)
    for named in named_files(spec):
        *parents, last = named.field.split(".")
        node = stored
        for key in parents:
            node[key] = dict(node[key])
            node = node[key]
        node[last] = str(named.value)
    return stored
