"""Request bodies: parsed strictly, and bounded in size.

Every route of the API uses :class:`StrictJSONRoute`, which parses a JSON body itself before the
route runs: bytes that are not UTF-8, ``NaN``, ``Infinity``, numbers beyond a float's range,
duplicate keys, text with a lone surrogate and integers beyond 64 bits are a 422 naming the field
where they are (``cache.ratio``), through the one error mapping (errors.py). That the body is
declared JSON in UTF-8 is checked before any route (security.py), and its size by the app itself
(``FastAPI(max_body_size=...)``, ``HERALDBENCH_MAX_BODY_BYTES``): a larger one is a 413 before it
is read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from heraldbench.platform.documents import StrictJSONError, document_problems, strict_json_loads
from heraldbench.platform.exceptions import SpecFieldError

__all__ = ["StrictJSONRequest", "StrictJSONRoute"]


class StrictJSONRequest(Request):
    """A request whose ``json()`` is :func:`strict_json_loads`."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = strict_json_loads(await self.body())
        return self._json

    async def refusal(self) -> SpecFieldError | None:
        """What makes a JSON body unusable, with its field; None for a usable body (or none).

        A body that is not JSON at all is left to FastAPI, which says where it stops parsing.
        """
        body = await self.body()
        if not body:
            return None
        try:
            document = await self.json()
        except StrictJSONError as exc:
            return SpecFieldError([{"field": exc.field or None, "message": exc.msg, "value": None}])
        except json.JSONDecodeError:
            return None
        problems = document_problems(document)
        return SpecFieldError(problems) if problems else None


class StrictJSONRoute(APIRoute):
    """An API route reading its JSON body with :class:`StrictJSONRequest`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Response:
            from heraldbench.api.errors import error_response

            strict = StrictJSONRequest(request.scope, request.receive)
            refusal = await strict.refusal()
            if refusal is not None:
                return error_response(refusal)
            return await handler(strict)

        return strict_handler
