"""`docqa serve --workers 2` on a real Postgres: two API processes on one port, each answering /health for
itself, /metrics summing the requests of both, and SIGTERM stopping them all."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from docqa.cli.main import main
from tests.support.live_server import free_port
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # each API process loads the demo model


def _requests_counted(metrics: str) -> float:
    return sum(
        float(value)
        for value in re.findall(r'^docqa_http_requests_total\{[^}]*route="/health"[^}]*\} (\S+)$', metrics, re.M)
    )


def test_two_api_processes_share_the_port_and_sum_their_metrics(tmp_path: Path, postgres_url: str) -> None:
    port = free_port()
    env = {**os.environ, "DOCQA_DATABASE_URL": postgres_url, "DOCQA_DATA_DIR": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "docqa", "serve", "--workers", "2", "--port", str(port)],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        seen: set[int] = set()
        while len(seen) < 2:  # both processes loaded and answering (the kernel spreads connections)
            assert time.monotonic() < deadline and proc.poll() is None, f"pids seen: {seen}"
            try:
                with ThreadPoolExecutor(8) as pool:
                    answers = list(pool.map(lambda _: httpx.get(f"{base}/health", timeout=10), range(16)))
            except httpx.TransportError:
                time.sleep(0.5)
                continue
            seen |= {r.json()["process"] for r in answers if r.status_code == 200 and "process" in r.json()}
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
