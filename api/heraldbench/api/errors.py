"""The one place where errors become HTTP responses (docs/api.md, "Errors").

``heraldbench.platform.exceptions`` maps to status codes here and nowhere else::

    SpecError, DataError, UnknownNameError, CapacityError  -> 422  {"detail": [problems]}
    NotFoundError                                          -> 404  {"detail": "message"}
    HTTPException (FastAPI's: 401, 405, 413, 501)          -> its code; a 405's Allow lists
                                                              every method of the path
    UnavailableError                                       -> 503
    InvariantViolation, any other error                    -> 500

A 422 names the field (a dotted path in the submitted document) and the value it had, as JSON
when JSON can hold it and as text otherwise (``nan``), cut to :data:`ECHO_CHARS` characters.
Pydantic's
errors are read from the ``ValidationError`` behind a :class:`SpecError`; a spec error raised
without one (``seeds: ...``) is split at its leading ``field:``.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

from heraldbench.platform.exceptions import (
    CapacityError,
    DataError,
    DistributedError,
    HeraldbenchError,
    InvariantViolation,
    NotFoundError,
    SpecError,
    SpecFieldError,
    UnavailableError,
    UnknownNameError,
)

__all__ = ["ECHO_CHARS", "FieldProblem", "SpecFieldError", "install_error_handlers", "status_of"]

logger = logging.getLogger("heraldbench.api")

FieldProblem = dict[str, Any]
#: An echoed value longer than this (as JSON) is shown as the start of its text.
ECHO_CHARS = 300

_STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (NotFoundError, 404),
    (SpecError, 422),
    (DataError, 422),
    (UnknownNameError, 422),
    (CapacityError, 422),
    (UnavailableError, 503),
    (DistributedError, 500),
    (InvariantViolation, 500),
)
_LEADING_FIELD = re.compile(r"^(?P<field>[A-Za-z_][\w.\[\]-]*): (?P<message>.+)$", re.DOTALL)


def status_of(exc: BaseException) -> int:
    """The HTTP status of a heraldbench error (500 for anything unmapped)."""
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def problems_of(exc: BaseException, document: Any = None) -> list[FieldProblem]:
    """Field/message/value problems of a 422 error."""
    if isinstance(exc, SpecFieldError):
        return [
            {**p, "message": _cut(p.get("message")), "value": shown(p.get("value"))}
            for p in exc.problems
        ]
    validation = _validation_cause(exc)
    if validation is not None:
        context = _context(str(exc))
        return [_problem(err, document, context) for err in validation.errors()]
    first, *rest = str(exc).splitlines() or [""]
    match = _LEADING_FIELD.match(" ".join([first, *rest]).strip())
    if match:
        return [{"field": match["field"], "message": _cut(match["message"]), "value": None}]
    return [{"field": None, "message": _cut(str(exc)), "value": None}]


def _validation_cause(exc: BaseException) -> ValidationError | None:
    seen = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ValidationError):
            return current
        seen.add(id(current))
        current = current.__cause__
    return None


def _context(message: str) -> str:
    """The ``(at point ..., seed ...)`` suffix grid expansion adds, if any."""
    match = re.search(r"\((at [^()]*)\)\s*$", message)
    return f" ({match[1]})" if match else ""


def _problem(err: Any, document: Any, context: str) -> FieldProblem:
    value = None if err.get("type") == "missing" else err.get("input")
    return {
        "field": _field(err.get("loc", ()), document) or "(spec)",
        "message": f"{err.get('msg', 'invalid')}{context}",
        "value": shown(value),
    }


def shown(value: Any) -> Any:
    """``value`` as a 422 echoes it: JSON if it is finite and short, else its text, cut."""
    try:
        encoded = jsonable_encoder(value, custom_encoder={bytes: repr})
        text = json.dumps(encoded, allow_nan=False)
    except (ValueError, TypeError):
        encoded, text = None, None
    if text is not None and len(text) <= ECHO_CHARS:
        return encoded
    full = value if isinstance(value, str) else (text or repr(value))
    if len(full) <= ECHO_CHARS:
        return full
    return f"{full[:ECHO_CHARS]}… ({len(full):,} characters)"


def _cut(message: Any, limit: int = 2 * ECHO_CHARS) -> Any:
    """A message quoting a long value (a path) cut to ``limit`` characters."""
    if not isinstance(message, str) or len(message) <= limit:
        return message
    return f"{message[:limit]}… ({len(message):,} characters)"


def _field(loc: tuple[Any, ...], document: Any) -> str:
    """A dotted path without the discriminator tags pydantic inserts (``dataset.samples``)."""
    parts, node = [], document
    for step in loc:
        if (
            isinstance(node, dict)
            and isinstance(step, str)
            and step not in node
            and node.get("kind") == step
        ):
            continue  # a discriminated union's tag
        parts.append(str(step))
        node = _child(node, step)
    return ".".join(parts)


def _child(node: Any, step: Any) -> Any:
    if isinstance(node, dict):
        return node.get(step)
    if isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
        return node[step]
    return None


def _request_problems(exc: RequestValidationError) -> list[FieldProblem]:
    problems = []
    for err in exc.errors():
        loc = list(err.get("loc", ()))
        where = loc[1:] if loc and loc[0] in ("body", "query", "path", "header") else loc
        value = None if err.get("type") in ("missing", "json_invalid") else err.get("input")
        message = err.get("msg", "invalid")
        if err.get("type") == "json_invalid":  # the body as a whole, at a character offset
            where = []
            if (err.get("ctx") or {}).get("error"):
                message = f"{message}: {err['ctx']['error']}"
        problems.append(
            {
                "field": ".".join(map(str, where)) or (str(loc[0]) if loc else None),
                "message": message,
                "value": shown(value),
            }
        )
    return problems


class ErrorResponse(JSONResponse):
    """A JSON error that always encodes: text that is not Unicode (a lone surrogate a client
    sent, echoed back) is written as its ``\\uXXXX`` escape instead of failing the response."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8", "backslashreplace")


def error_response(exc: BaseException, document: Any = None) -> JSONResponse:
    """The response of ``exc`` (any exception) in the shape of docs/api.md."""
    status = status_of(exc)
    if status == 422:
        return ErrorResponse({"detail": problems_of(exc, document)}, status_code=422)
    if status >= 500:
        logger.error("request failed: %s", exc, exc_info=exc)
        message = str(exc) if isinstance(exc, HeraldbenchError) else "internal server error"
        return ErrorResponse({"detail": message}, status_code=status)
    return ErrorResponse({"detail": str(exc)}, status_code=status)


async def _on_heraldbench_error(request: Request, exc: Exception) -> JSONResponse:
    return error_response(exc, getattr(request.state, "document", None))


async def _on_request_validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return ErrorResponse({"detail": _request_problems(exc)}, status_code=422)


async def _on_http_error(request: Request, exc: Exception) -> Any:
    """FastAPI's own answer, except that a method an API path does not take is a 405 whose
    ``Allow`` lists every method the API documents for the path (Starlette would name those of
    the first route matching it, or let the web UI answer with its GET and HEAD, or a 404)."""
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code in (404, 405):
        allowed = _methods_of(request)
        if allowed and request.method not in allowed:  # a path of the API, another method
            exc = StarletteHTTPException(
                405, "Method Not Allowed", {**(exc.headers or {}), "Allow": ", ".join(allowed)}
            )
    return await http_exception_handler(request, exc)


def _methods_of(request: Request) -> list[str]:
    """The methods the OpenAPI document gives the request's path (none: a path it lacks)."""
    path = request.url.path
    for template, operations in request.app.openapi().get("paths", {}).items():
        if compile_path(template)[0].match(path):
            return sorted(m.upper() for m in operations)
    return []


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    return error_response(exc)


def install_error_handlers(app: FastAPI) -> None:
    """Register the mapping on ``app``."""
    app.add_exception_handler(HeraldbenchError, _on_heraldbench_error)
    app.add_exception_handler(RequestValidationError, _on_request_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
