"""A `docqa serve` subprocess on a free loopback port, for the CPU benchmarks."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx


@contextmanager
def docqa_server(env: dict[str, str], *options: str) -> Iterator[tuple[str, int]]:
    """(base URL, server PID) once /health says ok; the server is stopped (SIGTERM) on exit. options: more
    of `docqa serve`'s (--generator-only)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "docqa", "serve", "--port", str(port), *options], env=env)
    try:
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"docqa serve exited with {server.returncode}")
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        yield base, server.pid
    finally:
        server.terminate()
        server.wait(120)
