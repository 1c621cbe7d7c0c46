"""What the routes share: the id path parameter and the documented error responses."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path

from heraldbench.api.schemas import Message, Problems

__all__ = ["ERRORS", "WRITE_ERRORS", "RowId"]

#: A row id; bounded so no database driver overflows (an unknown id is a 404).
RowId = Annotated[int, Path(ge=0, le=2**63 - 1)]

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": Message, "description": "unknown id"},
    413: {"model": Message, "description": "the body is over HERALDBENCH_MAX_BODY_BYTES"},
    422: {
        "model": Problems,
        "description": "invalid request: each problem names the field and value",
    },
}
WRITE_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    401: {
        "model": Message,
        "description": "HERALDBENCH_API_TOKEN is set and no valid bearer token was given",
    },
    503: {"model": Message, "description": "a service the request needs is unavailable"},
}
