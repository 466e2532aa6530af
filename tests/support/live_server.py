"""docqa's real app on a loopback port, and a reader for its streamed answers."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from docqa.api.main import create_app
from docqa.api.state import AppState
from docqa.core.settings import Settings
from docqa.service import DocQA


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sse_events(response: Any) -> Iterator[tuple[str, Any]]:
    """(event, data) of a streamed answer's Server-Sent Events, each as it arrives; response: httpx's."""
    kind = ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            yield kind, json.loads(line[6:])


@contextmanager
def serve_app(settings: Settings, qa: DocQA, port: int) -> Iterator[str]:
    """docqa's real ASGI app under uvicorn on a loopback port, over an opened DocQA."""
    with serve_state(AppState(settings, qa=qa), port) as base:
        yield base


@contextmanager
def serve_state(state: AppState, port: int, *, loaded: bool = True) -> Iterator[str]:
    """The app over a loaded AppState (a generation node's, say) on a loopback port; loaded=False: the app
    loads its models itself, in the background, as `docqa serve` does."""
    if loaded:
        state.loaded.set()
    server = uvicorn.Server(uvicorn.Config(create_app(state=state), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
