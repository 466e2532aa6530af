"""`docqa serve --workers 2` on a real Postgres: two API processes on one port, each answering /health for
itself, /metrics summing the requests of both, and SIGTERM stopping them all."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from docqa.api.server import METRICS_PREFIX
from docqa.cli.main import main
from tests.support.live_server import free_port
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # each API process loads the demo model


def _requests_counted(metrics: str) -> float:
    return sum(
        float(value)
        for value in re.findall(r'^docqa_http_requests_total\{[^}]*route="/health"[^}]*\} (\S+)$', metrics, re.M)
    )


def _serve_two(tmp_path: Path, postgres_url: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DOCQA_DATABASE_URL": postgres_url, "DOCQA_DATA_DIR": str(tmp_path)}
    return subprocess.Popen(
        [sys.executable, "-m", "docqa", "serve", "--workers", "2", "--port", str(port)],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


def _wait_for_both(proc: subprocess.Popen[bytes], base: str) -> set[int]:
    """The pids of both API processes, once both are loaded and answering (the kernel spreads connections)."""
    deadline = time.monotonic() + 180
    seen: set[int] = set()
    while len(seen) < 2:
        assert time.monotonic() < deadline and proc.poll() is None, f"pids seen: {seen}"
        try:
            with ThreadPoolExecutor(8) as pool:
                answers = list(pool.map(lambda _: httpx.get(f"{base}/health", timeout=10), range(16)))
        except httpx.TransportError:
            time.sleep(0.5)
            continue
        seen |= {r.json()["process"] for r in answers if r.status_code == 200 and "process" in r.json()}
    return seen


def test_two_api_processes_share_the_port_and_sum_their_metrics(tmp_path: Path, postgres_url: str) -> None:
    port = free_port()
    proc = _serve_two(tmp_path, postgres_url, port)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_both(proc, base)
        before = _requests_counted(httpx.get(f"{base}/metrics").text)
        with ThreadPoolExecutor(8) as pool:
            assert all(r.status_code == 200 for r in pool.map(lambda _: httpx.get(f"{base}/health"), range(40)))
        after = [_requests_counted(httpx.get(f"{base}/metrics").text) for _ in range(6)]
        assert all(total == before + 40 for total in after), (before, after)  # whichever process answers
    finally:
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=60)[0].decode()
    assert proc.returncode == 0 and "Traceback" not in output, output


def test_workers_without_a_database_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["serve", "--workers", "2", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and "DOCQA_DATABASE_URL" in result.output


def test_a_supervisor_killed_with_kill_9_takes_its_api_processes_with_it(tmp_path: Path, postgres_url: str) -> None:
    """Issue 41, item 11: its children went on serving as orphans (a new `serve` failed "address in use") and
    its metrics folder stayed behind."""
    port = free_port()
    proc = _serve_two(tmp_path, postgres_url, port)
    base = f"http://127.0.0.1:{port}"
    children = _wait_for_both(proc, base)
    left = list(Path(tempfile.gettempdir()).glob(f"{METRICS_PREFIX}{proc.pid}-*"))
    assert left
    proc.kill()  # kill -9: no cleanup runs in the supervisor
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in children):  # each got SIGTERM from the kernel and drained
        assert time.monotonic() < deadline, f"orphans still running: {[p for p in children if _alive(p)]}"
        time.sleep(0.2)
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{base}/health", timeout=5)  # the port is free again
    second = _serve_two(tmp_path, postgres_url, port)  # the next supervisor clears the dead one's folder
    try:
        deadline = time.monotonic() + 60
        while any(folder.exists() for folder in left):
            assert time.monotonic() < deadline and second.poll() is None
            time.sleep(0.2)
    finally:
        second.send_signal(signal.SIGTERM)
        second.communicate(timeout=60)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
