"""The stub upstream server the endpoint tests talk to: real HTTP on a loopback port, no model."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.live_server import free_port

Behaviour = Callable[[BaseHTTPRequestHandler], None]


@pytest.fixture
def upstream() -> Iterator[Callable[[Behaviour], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(behaviour: Behaviour) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.body = json.loads(raw or b"{}")  # what the client sent, for behaviours that check it
                behaviour(self)

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
