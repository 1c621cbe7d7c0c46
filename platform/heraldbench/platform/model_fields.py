"""Walking a document alongside the pydantic model that will validate it.

Shared by grid expansion (which lists are axes) and spec parsing (which booleans would be
coerced): both need a field's annotation, the members of a union and the model of a nested
mapping (the member of a discriminated union whose ``kind`` matches).
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

__all__ = ["coerced_booleans", "field_annotation", "members", "nested_model"]


def field_annotation(model: type[BaseModel] | None, key: str) -> Any:
    """The annotation of ``model``'s field ``key`` (None: no model or no such field)."""
    return None if model is None else _annotations(model).get(key)


@functools.lru_cache(maxsize=256)
def _annotations(model: type[BaseModel]) -> dict[str, Any]:
    """A model's fields' annotations, read once (pydantic builds ``model_fields`` per access)."""
    return {name: info.annotation for name, info in model.model_fields.items()}


def members(annotation: Any) -> list[Any]:
    """The alternatives of a union (through ``Annotated`` and ``Optional``), else itself."""
    try:
        return list(_members(annotation))
    except TypeError:  # an annotation that cannot be hashed
        return _members_of(annotation)


@functools.lru_cache(maxsize=1024)
def _members(annotation: Any) -> tuple[Any, ...]:
    return tuple(_members_of(annotation))


def _members_of(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in members(arg)]
    return [annotation]


def nested_model(annotation: Any, value: dict[str, Any]) -> type[BaseModel] | None:
    """The model a mapping under ``annotation`` is validated as."""
    models = [m for m in members(annotation) if isinstance(m, type) and issubclass(m, BaseModel)]
    if len(models) == 1:
        return _registered_spec(models[0], value)
    if not models:
        return None
    kind = value.get("kind")  # a discriminated union: the member whose kind matches
    for m in models:
        if "kind" in m.model_fields and m.model_fields["kind"].default == kind:
            return m
    return None


def _registered_spec(model: type[BaseModel], value: dict[str, Any]) -> type[BaseModel] | None:
    """A scheduler entry is validated as the spec of the kind it names (the registry is read at
    validation time, so plugins count); any other model as itself."""
    from heraldbench.platform.schedulers import SchedulerSpecBase, registered

    if model is not SchedulerSpecBase:
        return model
    kind = value.get("kind")  # a tag of any JSON type: only a string names a kind
    scheduler = registered().get(kind) if isinstance(kind, str) else None
    return scheduler.spec_cls if scheduler is not None else None


def _takes_bool(annotation: Any) -> bool:
    return any(m is bool or m is Any or m is typing.Any for m in members(annotation))


def _item_annotation(annotation: Any) -> Any:
    """The element type of a list-valued annotation (None if it takes no list)."""
    for m in members(annotation):
        if typing.get_origin(m) in (list, tuple, set, frozenset):
            args = typing.get_args(m)
            return args[0] if args else Any
    return None


def _only_bool(annotation: Any) -> bool:
    kinds = members(annotation)
    return bool in kinds and all(m is bool or m is type(None) for m in kinds)


def coerced_booleans(
    data: Any, model: type[BaseModel] | None, prefix: str = ""
) -> Iterator[tuple[str, str]]:
    """``(dotted path, problem)`` of each value pydantic's lax mode would coerce to or from a
    boolean: ``true``/``false`` where ``model`` wants no boolean (``workers: true`` would be 1),
    and a number or text where it wants only one (``lower_bound: 0`` or ``"no"``)."""
    if model is None or not isinstance(data, dict):
        return
    for key, value in data.items():
        annotation = field_annotation(model, key)
        if annotation is None:
            continue
        yield from _walk(value, annotation, f"{prefix}{key}")


def _walk(value: Any, annotation: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, bool):
        if not _takes_bool(annotation):
            yield path, "true/false where a number or text is expected"
    elif isinstance(value, (int, float, str)) and _only_bool(annotation):
        yield path, f"{value!r} where true or false is expected"
    elif isinstance(value, dict):
        yield from coerced_booleans(value, nested_model(annotation, value), f"{path}.")
    elif isinstance(value, list):
        item = _item_annotation(annotation)
        for index, element in enumerate(value):
            yield from _walk(element, item if item is not None else annotation, f"{path}.{index}")
