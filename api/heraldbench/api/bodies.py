"""Request bodies: parsed strictly, and bounded in size.

Every route of the API uses :class:`StrictJSONRoute`, whose JSON parser refuses ``NaN``,
``Infinity``, numbers beyond a float's range and duplicate keys (a 422 naming what it found,
through FastAPI's own ``json_invalid`` error). The size of a body is bounded by the app itself
(``FastAPI(max_body_size=...)``, ``HERALDBENCH_MAX_BODY_BYTES``): a larger one is a 413 before it
is parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from heraldbench.platform.documents import strict_json_loads

__all__ = ["StrictJSONRequest", "StrictJSONRoute"]


class StrictJSONRequest(Request):
    """A request whose ``json()`` is :func:`strict_json_loads`."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = strict_json_loads(await self.body())
        return self._json


class StrictJSONRoute(APIRoute):
    """An API route reading its JSON body with :class:`StrictJSONRequest`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Response:
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict_handler
