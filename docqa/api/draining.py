"""Graceful shutdown, the app's half: while draining (docqa.api.server sets it on SIGTERM or Ctrl+C),
new requests get 503 and the requests in flight are counted until their last byte is sent."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from docqa.api.state import AppState

OPEN_PATHS = frozenset({"/health"})


class InFlight:
    """Counts the requests being served and refuses new ones while draining (pure ASGI, so a
    streamed answer counts until its last byte is sent)."""

    def __init__(self, app: ASGIApp, state: AppState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        if self.state.draining.is_set():
            body = json.dumps({"error": {"type": "ShuttingDown", "message": "the server is shutting down"}})
            await send(
                {
                    "type": "http.response.start",
                    "status": 503,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"retry-after", b"5"),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
            return
        self.state.enter()
        try:
            await self.app(scope, receive, send)
        finally:
            self.state.leave()
