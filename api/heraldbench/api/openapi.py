"""The OpenAPI document: typed spec bodies, and bearer security only when a token is set.

The spec bodies (``POST /api/experiments``, ``/api/specs/validate``, ``/api/studies``) are read
as plain JSON objects, so that a 422 names each field by the submitted document (errors.py), but
the document types them with the JSON Schema of the spec models themselves
(:class:`~heraldbench.platform.spec.ExperimentSpec`, each registered scheduler's spec):

* ``ExperimentSpec`` is one run's spec (a study's body: it needs a ``tuning`` section);
* ``ExperimentSpecGrid`` is a grid (pipelines/grid.py): a knob's value may be a non-empty list of
  values (a scheduler knob's without repeats), and ``seeds`` lists seeds. Every object it names is
  ``<Model>Grid``, the model with each field a value or a list of values.

Rules over a model's fields that JSON Schema can say are in it (a cache's one size, a tuning
space entry's range or choices, a constraint's min or max). What it cannot say is checked on
submission and answered with a 422 naming the field: a dataset file that must exist under a data
folder, a ``time_profile`` file to read, a cache that must hold one iteration, a grid over the run
cap, cross-field rules (``low < high``; a tuning space naming the knobs of the scheduler it tunes).
"""

from __future__ import annotations

import copy
from typing import Any

from fastapi import FastAPI

from heraldbench.api.core.config import Settings
from heraldbench.platform.units import MAX_BYTES

__all__ = ["GRID_REF", "SPEC_REF", "customise_openapi", "spec_schemas"]

_PREFIX = "#/components/schemas/"
SPEC_REF = {"$ref": f"{_PREFIX}ExperimentSpec"}
GRID_REF = {"$ref": f"{_PREFIX}ExperimentSpecGrid"}
#: A byte size as units.parse_bytes reads it ("1.6GiB", "512MB", "4096"): a number that is not
#: zero, whole when it counts bytes, else with one of its units in any case. What this cannot
#: say (at least one byte after a fraction of a unit, at most 4 EiB) is checked on submission.
_BYTE_SIZE = (
    r"^\s*(?=[0-9.eE+-]*[1-9])(?:[0-9]+(?:[eE]\+?[0-9]+)?\s*[bB]?|"
    r"[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?\s*[kKmMgGtT][iI]?[bB])\s*$"
)
Schema = dict[str, Any]


def _declare_security(schema: Schema, settings: Settings) -> None:
    """Keep bearer security on the operations that enforce it (module docstring of deps.py):
    writes whenever a token is set, reads only under ``HERALDBENCH_PROTECT_READS``."""
    from heraldbench.api.deps import BEARER, READ_BEARER

    enforced = {BEARER, READ_BEARER} if settings.protect_reads else {BEARER}
    if not settings.auth_required:
        enforced = set()
    kept = False
    operations = [op for ops in schema.get("paths", {}).values() for op in ops.values()]
    unauthorized = next(
        (op["responses"]["401"] for op in operations if "401" in op.get("responses", {})), None
    )
    for operation in operations:
        names = {n for requirement in operation.get("security", []) for n in requirement}
        if names & enforced:
            operation["security"] = [{BEARER: []}]
            if unauthorized is not None:
                operation["responses"].setdefault("401", unauthorized)
            kept = True
            continue
        operation.pop("security", None)
        operation.get("responses", {}).pop("401", None)
    schemes = schema.get("components", {}).get("securitySchemes", {})
    schemes.pop(READ_BEARER, None)
    if not kept:
        schema["components"].pop("securitySchemes", None)


def spec_schemas() -> dict[str, Schema]:
    """Components for a spec and a grid spec (the scheduler registry read now)."""
    from heraldbench.platform.schedulers import registered
    from heraldbench.platform.spec import ExperimentSpec

    template = _PREFIX + "{model}"
    top = copy.deepcopy(ExperimentSpec.model_json_schema(ref_template=template))
    defs: dict[str, Schema] = top.pop("$defs", {})
    kinds = []
    for kind, scheduler in sorted(registered().items()):
        schema = copy.deepcopy(scheduler.spec_cls.model_json_schema(ref_template=template))
        defs.update(schema.pop("$defs", {}))
        name = f"Scheduler.{kind}"
        defs[name] = _kind_required(schema)
        kinds.append(name)
    schedulers = top["properties"]["schedulers"]
    schedulers["items"] = {"oneOf": [_ref(k) for k in kinds]}
    schedulers["uniqueItems"] = True  # a scheduler listed twice is refused
    defs["ExperimentSpec"] = top
    for schema in defs.values():
        _as_validated(schema)
        _exclusive_bounds(schema)
    _searchable(defs["TuningSpec"]["properties"]["space"], defs, kinds)
    _within_64_bits(defs)
    _kinds_of_unions(defs)
    grids = {f"{name}Grid": _grid_object(schema, name) for name, schema in defs.items()}
    _metric_shorthand(defs, grids)
    grid = grids["ExperimentSpecGrid"]
    grid["description"] = (
        "an experiment spec; a list of values where a knob takes one value is a grid axis "
        "(docs/api.md), and seeds lists seeds to repeat every point with"
    )
    grid["properties"]["schedulers"] = {
        **top["properties"]["schedulers"],
        "items": {"oneOf": [_ref(f"{k}Grid") for k in kinds]},
    }
    seed = top["properties"]["seed"]
    seeds = {"type": "array", "minItems": 1, "uniqueItems": True, "items": seed}
    grid["properties"]["seeds"] = {
        "anyOf": [seeds, {"type": "null"}], "description": "run every point with each seed"
    }
    no_seeds = {"properties": {"seeds": {"type": "null"}}}
    grid["dependentSchemas"] = {"seeds": {"anyOf": [no_seeds, {"not": {"required": ["seed"]}}]}}
    for name in kinds:  # two equal knob values would list one scheduler twice
        for knob in grids[f"{name}Grid"]["properties"].values():
            for option in knob.get("anyOf", []):
                if option.get("type") == "array" and "minItems" in option:
                    option["uniqueItems"] = True
    return {**defs, **grids}


def _ref(name: str) -> Schema:
    return {"$ref": _PREFIX + name}


def _kind_required(schema: Schema) -> Schema:
    """A member of a union tagged by ``kind``: the tag is required (it has a default)."""
    if "kind" in schema.get("properties", {}):
        schema["required"] = sorted({*schema.get("required", []), "kind"})
    return schema


def _kinds_of_unions(defs: dict[str, Schema]) -> None:
    """The members of discriminated unions (datasets) need their ``kind``."""
    for schema in defs.values():
        for prop in schema.get("properties", {}).values():
            for option in [prop, *prop.get("anyOf", [])]:
                for member in option.get("oneOf", []):
                    name = member.get("$ref", "").removeprefix(_PREFIX)
                    if name in defs:
                        _kind_required(defs[name])


def _as_validated(schema: Schema) -> None:
    """What the models' validators add to, or take from, their fields' JSON types, where JSON
    Schema can say it (a cross-field rule is checked on submission)."""
    from heraldbench.platform.timemodel import PROFILES

    props = schema.get("properties", {})
    sized = {"bytes"} if "ratio" in props else {"low", "high"} if "choices" in props else set()
    if "hot_budget" in props:  # FAE's hot table, a byte size
        sized = {"hot_budget"}
    if "device_memory" in props:  # ClusterSpec: the memory of a device and of a host
        sized = {"device_memory", "host_memory"}
    if "metric" in props:  # a tuning objective or constraint
        props["profile"] = {**props["profile"], "enum": sorted(PROFILES)}
        sized = {"min", "max"} if "min" in props else set()  # cache_memory: a byte size
        if sized:  # ... only cache_memory's bounds: the other metrics are numbers
            numbers = {name: {"not": {"type": "string"}} for name in sized}
            memory = {"required": ["metric"], "properties": {"metric": {"const": "cache_memory"}}}
            schema["allOf"] = [{"anyOf": [memory, {"properties": numbers}]}]
    for name in sized & props.keys():  # a byte size as text ("64MiB"), as units.py reads it
        options = [o for o in props[name].get("anyOf", []) if o.get("type") != "string"]
        for option in options:
            if option.get("type") == "integer":  # a count of bytes: units.parse_bytes's range
                option.update(minimum=1, maximum=MAX_BYTES)
        props[name]["anyOf"] = options + [{"type": "string", "pattern": _BYTE_SIZE}]
    if {"rows", "bytes", "ratio"} <= props.keys():  # CacheSpec: exactly one size
        schema["oneOf"] = [
            {"required": [n], "properties": {n: {"not": {"type": "null"}}}}
            for n in ("rows", "bytes", "ratio")
        ]


def _searchable(space: Schema, defs: dict[str, Schema], kinds: list[str]) -> None:
    """A tuning space names ``scheduler.<knob>`` (a knob of some scheduler; which one's is
    checked on submission), ``cache.<field>`` or ``placement.<knob>`` (a knob of some placement),
    each typed as its field (openapi_tuning.py), and at most one cache size."""
    from heraldbench.api.openapi_tuning import placement_knobs, typed_space
    from heraldbench.platform.tuning import CACHE_NAMES

    schedulers = [defs[k] for k in kinds]
    knobs = {k for s in schedulers for k in s.get("properties", {}) if k != "kind"}
    placed = placement_knobs()
    names = [f"scheduler.{k}" for k in sorted(knobs)] + [f"cache.{n}" for n in CACHE_NAMES]
    names += [f"placement.{k}" for k in sorted(placed)]
    typed_space(space, defs["CacheSpec"], schedulers, names, placed)
    sizes = ("cache.rows", "cache.bytes", "cache.ratio")
    pairs = [[a, b] for i, a in enumerate(sizes) for b in sizes[i + 1 :]]
    space["not"] = {"anyOf": [{"required": pair} for pair in pairs]}


def _within_64_bits(schema: Any) -> None:
    """Every integer of a spec fits a signed 64-bit integer (documents.py refuses others): an
    integer schema without a bound of its own gets that one."""
    if isinstance(schema, dict):
        if schema.get("type") == "integer":
            if "maximum" not in schema and "exclusiveMaximum" not in schema:
                schema["maximum"] = 2**63 - 1
            if "minimum" not in schema and "exclusiveMinimum" not in schema:
                schema["minimum"] = -(2**63)
        for value in schema.values():
            _within_64_bits(value)
    elif isinstance(schema, list):
        for value in schema:
            _within_64_bits(value)


def _exclusive_bounds(schema: Any) -> None:
    """pydantic writes a bound on a union (``step: int | float | None = Field(gt=0)``) as its
    own ``gt``/``ge``/``lt``/``le``: JSON Schema's names for them."""
    names = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum"}
    if isinstance(schema, dict):
        for key in [k for k in names if k in schema and "anyOf" in schema]:
            schema[names[key]] = schema.pop(key)
        for value in schema.values():
            _exclusive_bounds(value)
    elif isinstance(schema, list):
        for value in schema:
            _exclusive_bounds(value)


def _metric_shorthand(*groups: dict[str, Schema]) -> None:
    """An objective may be given as its metric's name alone (``objectives: [traffic]``)."""
    for defs in groups:
        for name in ("ObjectiveSpec", "ObjectiveSpecGrid"):
            if name in defs:
                metric = defs[name]["properties"]["metric"]
                defs[name] = {"anyOf": [defs[name], metric]}


def _accepts(schema: Schema, kind: str) -> bool:
    return schema.get("type") == kind or any(o.get("type") == kind for o in schema.get("anyOf", []))


def _is_model(schema: Schema) -> bool:
    options = [schema, *schema.get("anyOf", [])]
    return any("$ref" in o or "oneOf" in o for o in options)


def _grid_value(schema: Schema) -> Schema:
    """A field's schema in a grid: its value (objects as grids themselves) or a list of values."""
    inner = copy.deepcopy(schema)
    description = inner.pop("description", None)
    for key in ("title", "default"):
        inner.pop(key, None)
    single = _as_grid(inner) if _is_model(inner) else inner
    values = {"type": "array", "minItems": 1, "items": inner}
    if _accepts(inner, "array"):  # a list-valued field: only a list of its lists is an axis
        lists = [o for o in inner.get("anyOf", [inner]) if o.get("type") == "array"]
        values["items"] = lists[0] if len(lists) == 1 else {"anyOf": lists}
    grid: Schema = {"anyOf": [single, values]}
    if description:
        grid["description"] = description
    return grid


def _as_grid(schema: Schema) -> Schema:
    """References to models become references to their grids."""
    if "$ref" in schema:
        return {**schema, "$ref": schema["$ref"] + "Grid"}
    out = dict(schema)
    for key in ("anyOf", "oneOf"):
        if key in out:
            out[key] = [_as_grid(o) for o in out[key]]
    if "discriminator" in out:
        mapping = out["discriminator"].get("mapping", {})
        out["discriminator"] = {
            **out["discriminator"],
            "mapping": {k: v + "Grid" for k, v in mapping.items()},
        }
    return out


def _grid_object(schema: Schema, name: str) -> Schema:
    grid = copy.deepcopy(schema)
    grid["title"] = f"{schema.get('title', name)} (grid)"
    for key, prop in schema.get("properties", {}).items():
        if key != "kind":  # the tag picks the model; a list of tags is no axis
            grid["properties"][key] = _grid_value(prop)
    fields = schema.get("properties", {})
    for key in ("anyOf", "oneOf"):  # a model's rules over its fields (ParamRange, CacheSpec)
        if key in grid:
            grid[key] = [_grid_rule(rule, fields) for rule in grid[key]]
    if "not" in grid:
        grid["not"] = _grid_rule(grid["not"], fields, negated=True)
    return grid


def _grid_rule(rule: Schema, fields: dict[str, Schema], negated: bool = False) -> Schema:
    """A rule's condition on a field holds of its value, or of each value of its axis; under a
    ``not``, of some value of its axis (the points that combine them are refused)."""
    out = dict(rule)
    for key in ("anyOf", "oneOf"):
        if key in out:
            out[key] = [_grid_rule(r, fields, negated) for r in out[key]]
    if "not" in out:
        out["not"] = _grid_rule(out["not"], fields, not negated)
    if "properties" in out:
        out["properties"] = {
            name: _grid_condition(cond, _accepts(fields.get(name, {}), "array"), negated)
            for name, cond in out["properties"].items()
        }
    return out


def _grid_condition(cond: Schema, listed: bool, some: bool = False) -> Schema:
    value = {"allOf": [cond, {"type": "array"}]} if listed else cond  # only lists of lists
    axis = {"contains": value} if some else {"items": value}
    # a field taking no list: a list is its axis, never its value
    single = cond if listed else {"allOf": [cond, {"not": {"type": "array"}}]}
    return {"anyOf": [single, {"type": "array", "minItems": 1, **axis}]}


def customise_openapi(app: FastAPI, settings: Settings) -> None:
    """Add the spec components, and declare bearer security where it is enforced: on every
    operation that requires the token (``require_write``; ``require_read`` too under
    ``HERALDBENCH_PROTECT_READS``), and nowhere without a token, so that a client following the
    document sends the token exactly where it is asked for."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            schema.setdefault("components", {}).setdefault("schemas", {}).update(spec_schemas())
            _declare_security(schema, settings)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
