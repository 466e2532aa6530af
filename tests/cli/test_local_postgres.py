"""The README's Postgres from PyPI alone (tools/local_postgres.py): started on a kept folder, docqa's schema made
through the URL it prints, and the same database found after a restart (issue 62 item 7: Debian 12 has no
pgvector package)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

DOCQA = [sys.executable, "-m", "docqa"]


def _started(folder: Path) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "tools.local_postgres", "--dir", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    for line in server.stdout:
        found = re.match(r"export DOCQA_DATABASE_URL='(.+)'", line)
        if found:
            return server, found.group(1)
    server.wait(timeout=30)
    raise AssertionError(f"no URL printed: {server.stderr.read() if server.stderr else ''}")


def _db(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOCQA_DATABASE_URL": url}
    return subprocess.run([*DOCQA, "db", *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_local_postgres_from_pypi_holds_docqa_s_schema_across_restarts(tmp_path: Path) -> None:
    folder = tmp_path / "pgdata"
    server, url = _started(folder)
    try:
        made = _db(url, "upgrade")
        assert made.returncode == 0, made.stderr
        assert "up to date" in _db(url, "status").stdout
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    server, url = _started(folder)  # the data stays in the folder
    try:
        status = _db(url, "status")
        assert status.returncode == 0 and "up to date" in status.stdout, status.stdout + status.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
