"""Through a real `docqa serve` (demo model, this machine): prefix reuse and concurrency, end to end.

1. Time to first answer token of a question, then of a second question over the same retrieved chunk
   (same document, top_k 1): the second reuses the first prompt's KV prefix.
2. 8 streamed asks (64 answer tokens each: EOS ignored) sent at once, against the same 8 one after another; each
   run on a fresh server, so both start with the chunk cold, and with the answer cache off.

usage: python -m bench.serve_bench [--repeats N]   (starts and stops its own servers on loopback ports)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.local_server import docqa_server, sse

ROOT = Path(__file__).resolve().parents[1]

QUESTIONS = [
    "What was Northwind's revenue in 2025?",
    "How many robots did Northwind ship in 2025?",
    "Who is the chief executive of Northwind Robotics?",
    "What dividend does the board propose?",
    "Where is the new Northwind plant?",
    "What are the main risks for Northwind?",
    "What was the operating margin in 2025?",
    "How much cash did Northwind have at year end?",
]


def ask(base: str, question: str, document_id: int, max_tokens: int = 64) -> tuple[float, float, int]:
    """(server-side seconds to the first answer token, seconds in all at the client, completion tokens)."""
    body = {
        "question": question,
        "document_id": document_id,
        "top_k": 1,
        "max_tokens": max_tokens,
        "stream": True,
        "cache": False,  # measure generation, not the answer cache
        "ignore_eos": True,  # every answer max_tokens long, as the figure is defined (64 each)
    }
    start = time.perf_counter()
    done: dict = {}
    with httpx.stream("POST", f"{base}/v1/ask", json=body, timeout=600) as r:
        r.raise_for_status()
        for kind, data in sse(r):
            if kind == "done":
                done = json.loads(data)["timings"]
    ttft = done.get("ttft_ms")
    return (ttft / 1000 if ttft else float("nan")), time.perf_counter() - start, int(done.get("completion_tokens", 0))


@contextmanager
def fresh_server() -> Iterator[tuple[str, int]]:
    """A new `docqa serve` with the sample report uploaded and the model warmed up on another
    document, so the report's chunk is not in the prefix cache yet."""
    with tempfile.TemporaryDirectory() as data:
        env = {
            **os.environ,
            "DOCQA_DATA_DIR": data,
            "DOCQA_LLM_N_PARALLEL": "8",
            "DOCQA_API_BENCHMARK_REQUESTS": "true",
        }
        with docqa_server(env) as (base, _pid):
            pdf = ROOT / "sample_docs" / "annual_report_2025.pdf"
            files = [("files", (pdf.name, pdf.read_bytes(), "application/pdf"))]
            doc_id = httpx.post(f"{base}/v1/collections/default/documents", files=files, timeout=600).json()["files"][
                0
            ]["document_id"]
            md = ROOT / "sample_docs" / "operations_handbook.md"
            other = httpx.post(
                f"{base}/v1/collections/default/documents",
                files=[("files", (md.name, md.read_bytes(), "text/markdown"))],
                timeout=600,
            ).json()["files"][0]["document_id"]
            ask(base, "Warm-up question?", other, max_tokens=1)
            yield base, doc_id


def one_pair(questions: list[str]) -> tuple[float, float, int, int]:
    """The 8 asks one after another, then at once, each on a fresh server: (seconds, seconds, tokens, tokens)."""
    with fresh_server() as (base, doc_id):
        start = time.perf_counter()
        sequential = [ask(base, q, doc_id) for q in questions]
        sequential_s = time.perf_counter() - start
    with fresh_server() as (base, doc_id):
        results: list[tuple[float, float, int]] = []
        threads = [threading.Thread(target=lambda q=q: results.append(ask(base, q, doc_id))) for q in questions]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        concurrent_s = time.perf_counter() - start
    return sequential_s, concurrent_s, sum(r[2] for r in sequential), sum(r[2] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description="prefix reuse and concurrency through docqa serve")
    parser.add_argument(
        "--repeats", type=int, default=3, help="pairs of runs (one after another, at once); medians are reported"
    )
    repeats = parser.parse_args().repeats
    with fresh_server() as (base, doc_id):
        first_ttft, _, _ = ask(base, "What was Northwind's revenue in 2025?", doc_id)
        second_ttft, _, _ = ask(base, "What was the operating profit in 2025?", doc_id)
    # One server for the questions one after another, a fresh one for the same questions at once:
    # both start with the report's chunk cold, as a real burst of asks over new sources would. This
    # 2-core VM's speed drifts by 10-20% between minutes, so the pairs alternate and medians count.
    pairs = [one_pair(QUESTIONS) for _ in range(repeats)]
    ratios = [concurrent / sequential for sequential, concurrent, _, _ in pairs]
    rows = {
        "first question: time to first answer token (s)": first_ttft,
        "second question, same chunk: time to first answer token (s)": second_ttft,
        "second / first": second_ttft / first_ttft,
        "8 asks one after another, median (s)": statistics.median(p[0] for p in pairs),
        "8 asks at once, median (s)": statistics.median(p[1] for p in pairs),
        "at once / one after another, median of the pairs": statistics.median(ratios),
        "at once / one after another, each pair": " ".join(f"{r:.3f}" for r in ratios),
        "answer tokens, one after another / at once": " ".join(f"{p[2]}/{p[3]}" for p in pairs),
    }
    print("| figure | value |\n|---|---|")
    for k, v in rows.items():
        print(f"| {k} | {v:.3f} |" if isinstance(v, float) else f"| {k} | {v} |")


if __name__ == "__main__":
    main()
