"""Graceful shutdown, the app's half: while draining (docqa.api.server sets it on SIGTERM or Ctrl+C),
new requests get 503 and the requests in flight are counted until their last byte is sent; an answer still
streaming when the grace period ends is cut off with an error event, its stream ended as every error ends it
(not cancelled under the server: a stream with no end event and a CancelledError traceback in the log)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator

from starlette.types import ASGIApp, Receive, Scope, Send

from docqa.api.state import AppState
from docqa.core.events import AskEvent, ErrorEvent

CUT_OFF = "the server is shutting down: this answer was cut off when its grace period (api.shutdown_grace_s) ended"

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


async def cut_at_shutdown(events: AsyncIterator[AskEvent], state: AppState) -> AsyncGenerator[AskEvent]:
    """The answer's events, until the server's grace period ends (state.cut_off): then an error event, and
    the answer's own events closed (its generation cancelled). Seen at the answer's next event: a token, or
    a long prompt's progress."""
    try:
        async for event in events:
            if state.cut_off.is_set():
                yield ErrorEvent(CUT_OFF)
                return
            yield event
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
