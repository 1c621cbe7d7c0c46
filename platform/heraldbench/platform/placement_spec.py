"""A spec's ``placements:`` entries: a placement kind and its knobs, validated by the placement
registry (:mod:`heraldbench.platform.placements`), as a scheduler entry is by its own.

>>> PlacementSpec.model_validate({"kind": "flexshard", "memory_headroom": 0.1}).label()
'flexshard memory_headroom=0.1'
"""

from __future__ import annotations

import inspect
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from heraldbench.platform.exceptions import HeraldbenchError
from heraldbench.platform.placements import create, registered

__all__ = ["PlacementSpec", "knob_defaults", "run_knobs"]

#: The knob a placement sizes its iterations by; the spec's ``cluster.batch_size`` unless given.
BATCH_KNOB = "batch_size"


#: A knob's value as JSON Schema says it: a number (an integer within 64 bits), text, a boolean,
#: null or a list of numbers (recshard's buckets); the placement checks the rest.
_NUMBER = {"type": "number", "minimum": -(2**63), "maximum": 2**63 - 1}
_KNOB_VALUE = {"anyOf": [_NUMBER, {"type": ["string", "boolean", "null"]},
                         {"type": "array", "items": _NUMBER}]}


def knob_defaults(kind: str) -> dict[str, Any]:
    """The knobs of placement ``kind`` (its constructor's named arguments) and their defaults;
    none for a placement without a constructor of its own (``object``'s takes ``*args``)."""
    parameters = inspect.signature(registered()[kind].__init__).parameters
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {name: p.default for name, p in parameters.items()
            if name != "self" and p.kind not in variadic}  # fmt: skip


def run_knobs(kind: str, knobs: dict[str, Any], batch_size: int) -> dict[str, Any]:
    """``knobs`` as a run passes them: a placement with a batch-size knob gets the spec's
    ``cluster.batch_size`` where the entry does not set it."""
    if BATCH_KNOB in knob_defaults(kind) and BATCH_KNOB not in knobs:
        return {**knobs, BATCH_KNOB: batch_size}
    return dict(knobs)


def _check(kind: str, knobs: dict[str, Any]) -> None:
    """Raise ValueError (pydantic locates it at the entry) for an unknown kind or knob, or a
    knob value the placement refuses."""
    known = sorted(registered())
    if kind not in known:
        raise ValueError(f"unknown placement {kind!r}; known: {', '.join(known)}")
    defaults = knob_defaults(kind)
    for name in knobs:
        if name not in defaults:
            raise ValueError(f"placement {kind!r} has no knob {name!r}; its knobs: "
                             f"{', '.join(defaults) or 'none'}")
    try:
        create(kind, **knobs)
    except (HeraldbenchError, TypeError, ValueError) as exc:  # a knob of the wrong type too
        raise ValueError(f"placement {kind!r}: {exc}") from None


class PlacementSpec(BaseModel):
    """One placement of a spec: ``kind`` and its knobs (``heraldbench place SPEC`` lists the
    kinds; docs/sharding.md says what each knob does)."""

    model_config = ConfigDict(extra="allow", frozen=True,
                              json_schema_extra={"additionalProperties": _KNOB_VALUE})

    kind: str = Field(description="a registered placement kind",
                      json_schema_extra={"enum": sorted(registered())})

    @model_validator(mode="after")
    def _by_registry(self) -> PlacementSpec:
        _check(self.kind, self.knobs())
        return self

    def knobs(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    def label(self) -> str:
        """The kind plus the knobs set away from their defaults: ``flexshard memory_headroom=0.1``."""
        defaults = knob_defaults(self.kind)
        changed = {k: v for k, v in self.knobs().items() if defaults.get(k) != v}
        return " ".join([self.kind, *(f"{k}={v}" for k, v in changed.items())])
