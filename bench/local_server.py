"""A `docqa serve` subprocess on a free loopback port, for the benchmarks; waiting for a server's /health;
Server-Sent Events read line by line."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def docqa_server(
    env: dict[str, str], *options: str, module: str = "docqa", cwd: str | None = None
) -> Iterator[tuple[str, int]]:
    """(base URL, server PID) once /health says ok; the server is stopped (SIGTERM) on exit. options: more
    of `docqa serve`'s (--generator-only); module: what `python -m` runs (a bench's variant of the CLI); cwd:
    where it runs, which `python -m` puts first on the import path (an older checkout's folder)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", module, "serve", "--port", str(port), *options]
    server = subprocess.Popen(command, env=env, cwd=cwd)
    try:
        wait_healthy(base, server)
        yield base, server.pid
    finally:
        server.terminate()
        server.wait(120)


@contextmanager
def llama_server(bin_dir: Path, model: Path, context: int, *, quiet: bool = False) -> Iterator[str]:
    """llama-server with 16 slots sharing `context` tokens, flash attention, every layer on the GPU: its
    base URL once /health says ok; stopped on exit. quiet: its log (stderr) left out too."""
    port = free_port()
    command = [str(bin_dir / "llama-server"), "-m", str(model), "-np", "16", "-c", str(context), "-ngl", "99"]
    server = subprocess.Popen(
        [*command, "-fa", "on", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL if quiet else None,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, server)
        yield base
    finally:
        server.terminate()
        server.wait(120)


def wait_healthy(base: str, server: subprocess.Popen[Any], timeout_s: float = 600) -> None:
    """Until GET /health answers 200 (docqa's, llama-server's); an error if the server exits, says its loading
    failed (docqa's 503 with status "error"), or takes too long."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"{base}: the server exited with {server.returncode}")
        try:
            health = httpx.get(f"{base}/health", timeout=2)
            if health.status_code == 200:
                return
            if health.headers.get("content-type", "").startswith("application/json"):
                said = health.json()
                if isinstance(said, dict) and said.get("status") == "error":  # docqa's: loading failed for good
                    raise RuntimeError(f"{base}: loading failed: {said.get('detail') or 'see its log'}")
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{base} did not become healthy in {timeout_s:g} s")


def sse(response: httpx.Response) -> Iterator[tuple[str | None, str]]:
    """(event kind, data) of each `data:` line of a Server-Sent Events response, as they arrive."""
    kind = None
    for line in response.iter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            yield kind, line[6:]
