"""Graceful shutdown of a real `docqa serve` process, and SIGTERM to a running `docqa ingest`.

SIGTERM while an answer streams and an upload is being ingested: /health turns 503 at once, new
requests are refused, both in-flight requests finish, the process exits cleanly, and the data
directory is consistent when opened again."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from bench.local_server import wait_healthy
from docqa.service import DocQA
from tests.support.live_server import free_port, sse_events
from tests.support.paths import ROOT, make_settings, small_chunk_ingest_env

LONG_REPORT = "\n\n".join(
    f"Section {i}. The depot in district {i} received {100 + i} containers of spare parts in March, "
    f"and shipped {90 + i} of them to the assembly plant before the end of the quarter."
    for i in range(60)
)


def _serve(data: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A real `docqa serve` process on the port, its output kept."""
    return subprocess.Popen(
        [sys.executable, "-m", "docqa", "serve", "--port", str(port), "--data-dir", str(data)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_sigterm_drains_streams_and_uploads_then_exits(sample_index: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_index, data)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        # the upload's embedding took 123 s on 2 cores shared with a CI run, past a grace of 120 s: the
        # grace is a bound on a drain that must finish, not a timing target
        "DOCQA_API_SHUTDOWN_GRACE_S": "900",
        "DOCQA_LLM_N_CTX": "4096",
        "DOCQA_RETRIEVAL_RETRIEVER": "hybrid",  # the demo model embeds the upload: still at work at the signal
    }
    proc = _serve(data, port, env)
    try:
        wait_healthy(base, proc, timeout_s=120)
        results: dict[str, tuple[int, str]] = {}
        events: list[str] = []  # filled as the events arrive
        streaming, uploading = threading.Event(), threading.Event()

        def stream() -> None:
            body = {"question": "What was the revenue in 2025?", "stream": True, "max_tokens": 48}
            with httpx.stream("POST", f"{base}/v1/ask", json=body, timeout=900) as r:
                for kind, _ in sse_events(r):
                    events.append(kind)
                    streaming.set()  # citations come first, then the answer is generated

        def upload() -> None:
            uploading.set()
            r = httpx.post(
                f"{base}/v1/collections/default/documents",
                files=[("files", ("depots.txt", LONG_REPORT.encode(), "text/plain"))],
                timeout=900,
            )
            results["upload"] = (r.status_code, r.text)  # read in the test's thread, which says what came back

        streamer, uploader = threading.Thread(target=stream), threading.Thread(target=upload)
        streamer.start()
        assert streaming.wait(120), "the answer stream did not start"
        uploader.start()  # after retrieval, so the upload's embedding does not hold the question back
        uploading.wait()
        # the signal comes once the server serves the upload too, not after a fixed wait that assumes the
        # upload has reached it by then
        assert _serving_at_least(base, 3, timeout_s=60), "the upload did not reach the server"  # + this scrape
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        in_flight_at_signal = ("done" not in events, "upload" not in results)
        signalled = time.monotonic()
        health = httpx.get(f"{base}/health", timeout=5)
        assert health.status_code == 503 and health.json()["status"] == "draining"
        assert time.monotonic() - signalled < 2
        refused = httpx.post(f"{base}/v1/ask", json={"question": "anything?"}, timeout=5)
        assert refused.status_code == 503 and refused.json()["error"]["type"] == "ShuttingDown"
        for t in (streamer, uploader):
            t.join(900)
        exit_status = proc.wait(120)
        out, err = (stream.read().decode() for stream in (proc.stdout, proc.stderr) if stream is not None)
        assert in_flight_at_signal == (True, True)
        assert events[-1] == "done", events
        assert "upload" in results, "the upload got no response"
        status, text = results["upload"]
        assert status == 200 and json.loads(text)["added"] == 1, (status, text, err[-3000:])
        assert exit_status == 0, err[-3000:]
        # it says where it listens and what it serves, then one line per request without the query or body
        assert f"docqa serving on http://127.0.0.1:{port}  (data: {data.resolve()})" in out
        assert "GET /health 200" in err and "GET /health 503" in err and "POST /v1/ask 503" in err
        assert "POST /v1/collections/{name}/documents 200" in err and "revenue" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    qa = DocQA(make_settings(data))
    try:
        assert all(r.ok for r in qa.check())
        assert "depots.txt" in [d.name for d in qa.documents() if d.status == "ready"]
    finally:
        qa.close()


def test_ctrl_c_mid_stream_cuts_the_answer_off_with_an_error_event_when_the_grace_ends(
    sample_index: Path, tmp_path: Path
) -> None:
    """An answer longer than the grace period: the stream ends with an error event that says why (not silence
    and a CancelledError traceback in the log), and the server exits cleanly."""
    data = tmp_path / "data"
    shutil.copytree(sample_index, data)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "DOCQA_API_SHUTDOWN_GRACE_S": "0",  # cut at the next token
        "DOCQA_LLM_N_CTX": "8192",
        "DOCQA_API_BENCHMARK_REQUESTS": "true",  # the answer's ignore_eos: still streaming at the signal
    }
    proc = _serve(data, port, env)
    try:
        wait_healthy(base, proc, timeout_s=120)
        events: list[tuple[str, dict[str, object]]] = []
        body = {"question": "What was the revenue in 2025?", "stream": True, "max_tokens": 4000, "ignore_eos": True}
        body["seed"] = 7  # an answer that runs on (another may say a stop string within a few tokens)
        with httpx.stream("POST", f"{base}/v1/ask", json=body, timeout=300) as r:
            for kind, data_ in sse_events(r):
                events.append((kind, data_))
                if kind == "answer" and sum(k == "answer" for k, _ in events) == 1:
                    proc.send_signal(signal.SIGINT)  # Ctrl+C, the answer far from its 4,000 tokens
        exit_status = proc.wait(60)
        err = proc.stderr.read().decode() if proc.stderr is not None else ""
        kind, last = events[-1]
        assert kind == "error" and "cut off" in str(last["message"]), events[-3:]
        assert exit_status == 0, err[-3000:]
        assert "Traceback" not in err and "CancelledError" not in err, err[-3000:]
        assert "Ctrl+C again to stop at once" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _serving_at_least(base: str, requests: int, timeout_s: float) -> bool:
    """Whether the server counts this many requests in flight (its /metrics gauge) before the timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for line in httpx.get(f"{base}/metrics", timeout=5).text.splitlines():
            if line.startswith("docqa_requests_in_flight ") and float(line.split()[1]) >= requests:
                return True
        time.sleep(0.05)
    return False


def _documents_written(database: Path) -> int:
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(database, timeout=1) as db:
            return int(db.execute("SELECT count(*) FROM documents").fetchone()[0])
    except sqlite3.OperationalError:  # tables not created yet
        return 0


def test_sigterm_stops_an_ingest_cleanly(tiny_qwen3: Path, tmp_path: Path) -> None:
    folder, data = tmp_path / "docs", tmp_path / "data"
    folder.mkdir()
    for i in range(30):
        (folder / f"part{i:02d}.txt").write_text(LONG_REPORT.replace("depot", f"depot-{i}"), encoding="utf-8")
    env = small_chunk_ingest_env(data, tiny_qwen3)
    command = [sys.executable, "-m", "docqa", "ingest", str(folder), "--json"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while _documents_written(make_settings(data).database_path) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr

    qa = DocQA(make_settings(data))
    try:
        assert all(r.ok for r in qa.check())
        done = len(qa.documents())
    finally:
        qa.close()
    assert 0 < done < 30, done
    final = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert final.returncode == 0, final.stderr
    assert json.loads(final.stdout)["unchanged"] == done
