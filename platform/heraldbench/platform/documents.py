"""Reading spec documents strictly: what JSON and YAML parsers would otherwise let through.

Python's ``json`` accepts ``NaN``, ``Infinity`` and numbers beyond a float's range (``1e400``
becomes ``inf``) and keeps the last of two equal keys; PyYAML keeps the last duplicate key as well.
A spec with either is ambiguous, so both readers here refuse them, naming what they found.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import yaml

from heraldbench.platform.exceptions import SpecError

__all__ = ["StrictJSONError", "read_document", "strict_json_loads", "strict_yaml_load"]


class StrictJSONError(json.JSONDecodeError):
    """A JSON document with a non-finite number or a duplicate key."""


class _Refused(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Refused(f"duplicate key {key[:100]!r}")
        result[key] = value
    return result


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"number {text[:100]} is beyond the range of a float")
    return value


def _constant(text: str) -> float:
    raise _Refused(f"{text} is not a number JSON allows")


def strict_json_loads(text: str | bytes) -> Any:
    """``json.loads`` refusing ``NaN``/``Infinity``, out-of-range numbers and duplicate keys.

    Raises:
        json.JSONDecodeError: invalid JSON (bytes that are not UTF-8 included);
            :class:`StrictJSONError` for the refusals above.
    """
    try:
        return json.loads(
            text, object_pairs_hook=_no_duplicates, parse_float=_finite, parse_constant=_constant
        )
    except _Refused as exc:
        doc = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        raise StrictJSONError(str(exc), doc, 0) from None
    except UnicodeDecodeError as exc:  # JSON text is UTF-8 (RFC 8259)
        doc = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        raise json.JSONDecodeError(f"not UTF-8 ({exc.reason})", doc, exc.start) from None


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {str(key)[:100]!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def strict_yaml_load(text: str) -> Any:
    """``yaml.safe_load`` refusing duplicate keys."""
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass


def read_document(path: str | Path) -> Any:
    """A YAML or JSON file (by suffix) read strictly.

    Raises:
        SpecError: the file cannot be read or is not valid (strict) JSON or YAML.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise SpecError(f"cannot read spec file {path}: {reason}") from None
    is_json = path.suffix == ".json"
    try:
        return strict_json_loads(text) if is_json else strict_yaml_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise SpecError(f"{path} is not valid {'JSON' if is_json else 'YAML'}: {exc}") from None
