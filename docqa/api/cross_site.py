"""Other web sites cannot write to a docqa that has no API keys, and the web page cannot be framed.

With no keys (the default, for one user on one machine), any page the user visits could otherwise send a
cross-site form POST (multipart needs no CORS preflight) and plant or delete documents. A browser says where
a request comes from: `Sec-Fetch-Site: cross-site`, or an `Origin` whose host is not the one the request is
sent to. Such requests that change state (POST, PUT, PATCH, DELETE) get 403; clients that are not browsers
(curl, the OpenAI SDK, docqa's CLI) send neither header and are not affected. With keys, a browser cannot
attach the bearer key by itself, so the key guards instead. Every response also says nosniff, and the page
may not be framed by another site (clickjacking); the page itself loads only its own scripts and styles.

DNS rebinding: a page on attacker.example can point its own name at 127.0.0.1 and then read docqa as a
same-origin page would, documents included. Its requests still carry `Host: attacker.example`, so without
keys only the names docqa is known by are served: an IP address, `localhost` (and `*.localhost`), this
machine's host name, and the names in `DOCQA_API_ALLOWED_HOSTS` (`*`: any). Others get 421 naming the setting.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Iterable
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


def host_name(host_header: str) -> str:
    """The name of a Host header, without its port ("[::1]:8000" -> "::1")."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class KnownHosts:
    """The names a docqa without keys answers to (see the module)."""

    def __init__(self, allowed: Iterable[str]) -> None:
        names = {name.strip().lower() for name in allowed if name.strip()}
        self.any = "*" in names
        machine = socket.gethostname().lower()
        self.names = names | {"localhost", machine, machine.split(".")[0], socket.getfqdn().lower()}

    def known(self, host_header: str) -> bool:
        name = host_name(host_header).rstrip(".")
        if self.any or not name or name in self.names or name.endswith(".localhost"):
            return True  # no Host at all: HTTP/1.0 by hand, not a browser
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True


class CrossSiteGuard:
    def __init__(self, app: ASGIApp, open_without_keys: bool, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.guard = open_without_keys  # only where no API key protects the writes
        self.hosts = KnownHosts(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        if self.guard:
            host = headers.get(b"host", b"").decode("latin-1")
            if not self.hosts.known(host):
                await _refuse(send, 421, "UnknownHost", _unknown_host(host))
                return
            if scope.get("method") in _WRITES and cross_site(headers):
                await _refuse(send, 403, "CrossSiteRequest", _CROSS_SITE)
                return

        page = scope.get("path") == "/" or str(scope.get("path", "")).startswith("/static/")
        extra = [*_SECURITY_HEADERS, *([_PAGE_POLICY] if page else [])]

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


_CROSS_SITE = (
    "a cross-site request may not change documents on a docqa without API keys "
    "(set DOCQA_API_KEYS to serve other sites' pages)"
)


def _unknown_host(host: str) -> str:
    return (
        f"this docqa has no API keys and does not answer to the host name '{host_name(host)[:100]}' (a guard against "
        "DNS rebinding): add it to DOCQA_API_ALLOWED_HOSTS, or set DOCQA_API_KEYS"
    )


async def _refuse(send: Send, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *_SECURITY_HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})
