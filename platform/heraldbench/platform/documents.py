"""Reading spec documents strictly: what JSON and YAML parsers would otherwise let through.

Python's ``json`` accepts ``NaN``, ``Infinity`` and numbers beyond a float's range (``1e400``
becomes ``inf``) and keeps the last of two equal keys; PyYAML keeps the last duplicate key as well.
A spec with either is ambiguous, so both readers here refuse them, naming what they found and
where. :func:`document_problems` finds what no parsed spec may hold, whichever reader read it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import yaml

from heraldbench.platform.exceptions import SpecError, SpecFieldError

__all__ = [
    "StrictJSONError", "check_document", "document_problems", "read_document", "read_problem", "strict_json_loads",
    "strict_yaml_load",
]


class StrictJSONError(json.JSONDecodeError):
    """A JSON document with a non-finite number or a duplicate key.

    Attributes:
        field: the dotted path of the value refused (``cache.ratio``; ``schedulers.0.lookahead``),
            empty for the document itself.
    """

    def __init__(self, msg: str, doc: str, pos: int, field: str = "") -> None:
        super().__init__(msg, doc, pos)
        self.field = field


class _Refused:
    """Stands in for a value strict JSON refuses, so that its place can be named after parsing
    (the parser's hooks see a value, never where it is)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        result[key] = _Refused(f"duplicate key {key[:100]!r}") if key in result else value
    return result


def _finite(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else _Refused(f"{text[:100]} is beyond a float's range")


def _constant(text: str) -> _Refused:
    return _Refused(f"{text} is not a number JSON allows")


def _first_refused(node: Any, path: tuple[str, ...] = ()) -> tuple[tuple[str, ...], _Refused] | None:
    if isinstance(node, _Refused):
        return path, node
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        found = _first_refused(child, (*path, str(key)))
        if found is not None:
            return found
    return None


def strict_json_loads(text: str | bytes) -> Any:
    """``json.loads`` refusing ``NaN``/``Infinity``, out-of-range numbers and duplicate keys;
    bytes must be UTF-8 (JSON's encoding, RFC 8259: ``json.loads`` would also guess UTF-16/32).

    Raises:
        json.JSONDecodeError: invalid JSON (bytes that are not UTF-8 included);
            :class:`StrictJSONError` for the refusals above, with the refused value's field.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            doc = text.decode("utf-8", "replace")
            raise json.JSONDecodeError(f"not UTF-8 ({exc.reason})", doc, exc.start) from None
    document = json.loads(
        text, object_pairs_hook=_no_duplicates, parse_float=_finite, parse_constant=_constant
    )
    found = _first_refused(document)
    if found is not None:
        path, refused = found
        raise StrictJSONError(refused.reason, text, 0, ".".join(path))
    return document


def document_problems(document: Any, path: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """What no spec may hold, wherever it is: text with a lone surrogate (not Unicode text: it
    cannot be stored or echoed), and integers beyond a signed 64-bit integer (no database
    column, numpy array or numba kernel holds them). One problem per place, as
    ``{"field", "message", "value"}``."""
    problems: list[dict[str, Any]] = []
    where = ".".join(path)
    if isinstance(document, str) and _lone_surrogate(document):
        shown = document.encode("utf-8", "backslashreplace").decode("utf-8")[:100]
        problems.append({"field": where, "message": "text with a lone surrogate (not Unicode "
                         "text)", "value": shown})  # fmt: skip
    elif isinstance(document, int) and not isinstance(document, bool):
        if not -(2**63) <= document < 2**63:
            problems.append({"field": where, "message": "an integer beyond 64 bits (at most "
                             "2**63 - 1)", "value": str(document)[:100]})  # fmt: skip
    elif isinstance(document, dict):
        for key, value in document.items():
            key_text = str(key)
            if _lone_surrogate(key_text):
                shown = key_text.encode("utf-8", "backslashreplace").decode("utf-8")[:100]
                problems.append({"field": ".".join((*path, shown)), "message": "a field name "
                                 "with a lone surrogate (not Unicode text)", "value": None})
                continue
            problems += document_problems(value, (*path, key_text))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            problems += document_problems(value, (*path, str(index)))
    return problems


def check_document(document: Any) -> None:
    """Raise :class:`SpecFieldError` for the :func:`document_problems` of ``document``."""
    problems = document_problems(document)
    if problems:
        raise SpecFieldError(problems)


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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


def read_problem(exc: BaseException) -> str:
    """Why a file could not be read or parsed, without quoting what it holds (PyYAML's messages
    show the offending line; a decoding error the offending byte)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return f"{exc.problem or exc.context or 'invalid YAML'}{where}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start})"
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    if isinstance(exc, OSError):
        return (exc.strerror or type(exc).__name__).lower()
    return type(exc).__name__


def read_document(path: str | Path) -> Any:
    """A YAML or JSON file (by suffix) read strictly.

    Raises:
        SpecError: the file cannot be read or is not valid (strict) JSON or YAML.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read spec file {path}: {read_problem(exc)}") from None
    is_json = path.suffix == ".json"
    try:
        return strict_json_loads(text) if is_json else strict_yaml_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise SpecError(f"{path} is not valid {'JSON' if is_json else 'YAML'}: {exc}") from None
