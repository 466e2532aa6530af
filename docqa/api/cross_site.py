"""Other web sites cannot write to a docqa that has no API keys, and the web page cannot be framed.

With no keys (the default, for one user on one machine), any page the user visits could otherwise send a
cross-site form POST (multipart needs no CORS preflight) and plant or delete documents. A browser says where
a request comes from: `Sec-Fetch-Site: cross-site`, or an `Origin` whose host is not the one the request is
sent to. Such requests that change state (POST, PUT, PATCH, DELETE) get 403; clients that are not browsers
(curl, the OpenAI SDK, docqa's CLI) send neither header and are not affected. With keys, a browser cannot
attach the bearer key by itself, so the key guards instead. Every response also says nosniff, and the page
may not be framed by another site (clickjacking); the page itself loads only its own scripts and styles.
Not done: a Host check against DNS rebinding (it would need the list of names a server is reached by).
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
# The web page's own (FastAPI's /docs loads its scripts from a CDN, so the policy is the page's only).
_PAGE_POLICY = (
    b"content-security-policy",
    b"default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'",
)


def cross_site(headers: dict[bytes, bytes]) -> bool:
    """Whether a browser says this request comes from another site."""
    if headers.get(b"sec-fetch-site", b"").lower() == b"cross-site":
        return True
    origin = headers.get(b"origin")
    if not origin or origin == b"null":
        return origin == b"null"  # a sandboxed frame or a file: page
    return urlsplit(origin.decode("latin-1")).netloc.lower() != headers.get(b"host", b"").decode("latin-1").lower()


class CrossSiteGuard:
    def __init__(self, app: ASGIApp, open_without_keys: bool) -> None:
        self.app = app
        self.guard = open_without_keys  # only where no API key protects the writes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        if self.guard and scope.get("method") in _WRITES and cross_site(headers):
            await _refuse(send)
            return

        page = scope.get("path") == "/" or str(scope.get("path", "")).startswith("/static/")
        extra = [*_SECURITY_HEADERS, *([_PAGE_POLICY] if page else [])]

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


async def _refuse(send: Send) -> None:
    body = json.dumps(
        {
            "error": {
                "type": "CrossSiteRequest",
                "message": "a cross-site request may not change documents on a docqa without API keys "
                "(set DOCQA_API_KEYS to serve other sites' pages)",
            }
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [(b"content-type", b"application/json"), *_SECURITY_HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})
