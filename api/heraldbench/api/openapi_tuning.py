"""A study's search space in the OpenAPI document, typed entry by entry.

``tuning.space`` maps a searchable name to a range or a list of choices (tuning.py). Its JSON
Schema gives each name its own entry, whose choices and range ends take the values the field
itself takes: ``cache.rows`` positive integers, ``cache.bytes`` byte sizes, ``cache.policy`` the
policies, ``scheduler.<knob>`` what that knob takes in any registered scheduler (which
scheduler a study tunes is checked on submission, with its own bounds), ``placement.<knob>`` a
number, text or boolean as that knob's default is (a placement's knobs are its constructor's
arguments; list-valued ones are not searchable). So a value the document
accepts for an entry is one the service accepts for that field, and no name outside the list is
accepted.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["placement_knobs", "typed_space"]

Schema = dict[str, Any]
_PREFIX = "#/components/schemas/"
_NULL = {"type": "null"}
_NUMERIC = ("integer", "number")


def _plain(schema: Schema) -> Schema:
    """A field's value schema without its documentation and default."""
    out = copy.deepcopy(schema)
    for key in ("title", "default", "description"):
        out.pop(key, None)
    return out


def _options(schema: Schema) -> list[Schema]:
    return [_plain(o) for o in schema.get("anyOf", [schema])]


def _entry(options: list[Schema]) -> Schema:
    """A ParamRange whose choices and ends are ``options`` (a range only over numbers)."""
    values = [o for o in options if o != _NULL]
    unique = [o for i, o in enumerate(values) if o not in values[:i]]
    item = unique[0] if len(unique) == 1 else {"anyOf": unique}
    if _NULL in options:
        item = {"anyOf": [*unique, _NULL]}
    ends = [o for o in unique if o.get("type") in _NUMERIC or "pattern" in o]
    end = {"anyOf": [*ends, _NULL]} if ends else _NULL
    return {
        "allOf": [{"$ref": f"{_PREFIX}ParamRange"}],
        "properties": {
            "choices": {"anyOf": [{"type": "array", "minItems": 1, "items": item}, _NULL]},
            "low": end,
            "high": end,
        },
    }


def _value_schema(default: Any) -> Schema | None:
    """The JSON Schema of a scalar knob's values, from its default (None: not searchable)."""
    if isinstance(default, bool):
        return {"type": "boolean"}
    if isinstance(default, int | float):
        return {"type": "number"}
    return {"type": "string"} if isinstance(default, str) else None


def placement_knobs() -> dict[str, list[Schema]]:
    """Every registered placement's searchable knobs (scalar defaults), with their values'
    schemas over all placements having that knob."""
    from heraldbench.platform.placement_spec import knob_defaults
    from heraldbench.platform.placements import registered

    knobs: dict[str, list[Schema]] = {}
    for kind in sorted(registered()):
        for name, default in knob_defaults(kind).items():
            schema = _value_schema(default)
            if schema is not None and schema not in knobs.setdefault(name, []):
                knobs[name].append(schema)
    return {name: options for name, options in knobs.items() if options}


def typed_space(space: Schema, cache: Schema, schedulers: list[Schema], names: list[str],
                placements: dict[str, list[Schema]] | None = None) -> None:  # fmt: skip
    """Type ``space`` (TuningSpec's property) in place: one entry per searchable name.

    Args:
        cache: CacheSpec's schema (its fields' schemas as the document has them).
        schedulers: each registered scheduler spec's schema.
        names: the searchable names (``scheduler.<knob>``, ``cache.<field>``,
            ``placement.<knob>``).
        placements: each placement knob's value schemas (:func:`placement_knobs`).
    """
    entries = {}
    for name in names:
        group, _, field = name.partition(".")
        if group == "cache":  # a size searched is given: null is no size
            options = [o for o in _options(cache["properties"][field]) if o != _NULL]
        elif group == "placement":
            options = list((placements or {})[field])
        else:
            options = [o for s in schedulers if field in s.get("properties", {})
                       for o in _options(s["properties"][field])]  # fmt: skip
        entries[name] = _entry(options)
    space.pop("additionalProperties", None)
    space.pop("propertyNames", None)
    space["properties"] = entries
    space["additionalProperties"] = False
