"""What a browser and a careless client need to be told, before any route runs.

:class:`SecurityMiddleware` wraps the whole app (outside FastAPI's own body-size limit and error
handling, so that a 413 or a 500 is answered the same way):

* **Trusted hosts.** ``Host`` must parse as ``name[:port]`` or ``[v6]:port`` (``localhost:evil.com``
  does not) and name one of ``HERALDBENCH_TRUSTED_HOSTS`` (default: the loopback names); else a
  400. A page on another site that rebinds its DNS name to 127.0.0.1 still sends its own name as
  ``Host``, so it cannot reach the local service. An entry ``*.example.org`` admits the
  subdomains of example.org; ``*`` admits all.
* **Same origin for changes.** A POST, PUT, PATCH or DELETE whose ``Origin`` (or, without one,
  ``Referer``) is another origin than the service's own, or that a browser marks
  ``Sec-Fetch-Site: cross-site``, is a 403, token or not: a page elsewhere cannot submit or cancel
  through the user's browser. Clients that send neither (scripts, the CLI) are unaffected.
* **Bodies are JSON in UTF-8.** A request with a body must declare ``application/json`` (or a
  ``+json`` type) and no charset but UTF-8; else a 415 naming what it declared.
* **Headers** on every response, errors included: a Content-Security-Policy (scripts, styles and
  connections from the service itself only; the API docs pages may also load Swagger UI and
  ReDoc from their CDN), ``X-Frame-Options: DENY``, ``X-Content-Type-Options: nosniff`` and
  ``Referrer-Policy: no-referrer``.
"""

from __future__ import annotations

import email.message
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
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
_CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: RFC 9110's Host: a bracketed IPv6 literal or a registered name / IPv4 address, then a port.
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_.-]+))(?::(?P<port>[0-9]{1,5}))?$")


def host_name(header: str) -> str | None:
    """The name of a ``Host`` header without its port (``[::1]:8000`` -> ``::1``); None when
    the header is not a host and an optional numeric port."""
    match = _HOST.match(header.strip().lower())
    if match is None or (match["port"] is not None and int(match["port"]) > 65535):
        return None
    return match["v6"] or match["name"]


def _allowed(name: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.strip().lower().strip("[]")
        if pattern == "*" or pattern == name:
            return True
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
    return False


def _refusal(headers: Headers, scope: Scope, trusted: tuple[str, ...]) -> tuple[int, str] | None:
    """The status and reason to refuse a request with, or None to let it through."""
    host = headers.get("host", "")
    name = host_name(host)
    if name is None or not _allowed(name, trusted):
        return 400, f"Host {host[:100]!r} is not one this service answers (HERALDBENCH_TRUSTED_HOSTS)"
    if scope.get("method", "GET") not in _CHANGES:
        return None
    foreign = _foreign_origin(headers, f"{scope.get('scheme', 'http')}://{host.strip().lower()}")
    if foreign is not None:
        return 403, f"a change requested from another origin ({foreign[:100]}) is refused"
    return _body_type_refusal(headers)


def _foreign_origin(headers: Headers, own: str) -> str | None:
    """The foreign origin a change comes from, or None when it is the service's own (or the
    client, not being a browser, says nothing of where it comes from)."""
    if headers.get("sec-fetch-site", "").lower() == "cross-site":
        return "Sec-Fetch-Site: cross-site"
    origin = headers.get("origin")
    if origin is None and headers.get("referer"):
        parts = urlsplit(headers["referer"])
        origin = f"{parts.scheme}://{parts.netloc}"
    if origin is None:
        return None
    return None if origin.strip().lower() == own else origin


def _body_type_refusal(headers: Headers) -> tuple[int, str] | None:
    has_body = headers.get("transfer-encoding") or headers.get("content-length", "0") != "0"
    if not has_body:
        return None
    declared = headers.get("content-type", "")
    message = email.message.Message()
    message["content-type"] = declared
    kind = message.get_content_type()
    charset = (message.get_param("charset") or "utf-8").lower()
    if (kind == "application/json" or kind.endswith("+json")) and charset in ("utf-8", "utf8"):
        return None
    shown = declared[:100] or "none"
    return 415, f"send the body as application/json in UTF-8 (Content-Type: {shown})"


class SecurityMiddleware:
    """Refuses untrusted hosts, foreign changes and non-JSON bodies; adds the security headers
    to every response (module docstring)."""

    def __init__(self, app: ASGIApp, trusted_hosts: Iterable[str] = LOOPBACK_HOSTS) -> None:
        self.app = app
        self.trusted_hosts = tuple(trusted_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
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

        refusal = _refusal(Headers(scope=scope), scope, self.trusted_hosts)
        if refusal is not None:
            status, reason = refusal
            await JSONResponse({"detail": reason}, status)(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)
