"""What a browser needs to be told: which Host names the service answers, and response headers.

* **Trusted hosts.** A request whose ``Host`` is not one of ``HERALDBENCH_TRUSTED_HOSTS``
  (default: the loopback names) gets a 400 before any route runs. A page on another site that
  rebinds its DNS name to 127.0.0.1 still sends its own name as ``Host``, so it cannot reach the
  local service. An entry ``*.example.org`` admits the subdomains of example.org; ``*`` admits all.
* **Headers** on every response: a Content-Security-Policy (scripts, styles and connections from
  the service itself only; the API docs pages may also load Swagger UI and ReDoc from their
  CDN), ``X-Frame-Options: DENY``, ``X-Content-Type-Options: nosniff`` and
  ``Referrer-Policy: no-referrer``.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CSP", "DOCS_CSP", "LOOPBACK_HOSTS", "SecurityMiddleware", "host_name"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
#: FastAPI's /docs and /redoc pages load their scripts from a CDN and start them inline.
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.googleapis.com; "
    "img-src 'self' data: https://fastapi.tiangolo.com https://cdn.redoc.ly; "
    "font-src 'self' https://fonts.gstatic.com; worker-src 'self' blob:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_DOCS_PATHS = ("/docs", "/redoc")


def host_name(header: str) -> str:
    """The name of a ``Host`` header, without its port (``[::1]:8000`` -> ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def _allowed(name: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.strip().lower().strip("[]")
        if pattern == "*" or pattern == name:
            return True
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
    return False


class SecurityMiddleware:
    """Refuses untrusted ``Host`` headers and adds the security headers (module docstring)."""

    def __init__(self, app: ASGIApp, trusted_hosts: Iterable[str] = LOOPBACK_HOSTS) -> None:
        self.app = app
        self.trusted_hosts = tuple(trusted_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        name = host_name(Headers(scope=scope).get("host", ""))
        path = scope.get("path", "")
        policy = DOCS_CSP if path.startswith(_DOCS_PATHS) else CSP

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", policy)
                headers.setdefault("X-Frame-Options", "DENY")
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "no-referrer")
            await send(message)

        if not _allowed(name, self.trusted_hosts):
            response = PlainTextResponse(
                f"Host {name[:100]!r} is not one this service answers (HERALDBENCH_TRUSTED_HOSTS)",
                status_code=400,
            )
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)
