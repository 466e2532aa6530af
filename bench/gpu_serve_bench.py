"""The whole path on the GPU, as users see it: 16 CUAD questions asked at once, streamed, through a real
`docqa serve` over CUAD contracts ingested with BM25 (top 3 chunks, 256 answer tokens each, EOS ignored,
the answer cache off), in two set-ups:

1. `docqa serve` with the batching engine in-process;
2. a docqa API process with no model (DOCQA_LLM_ENDPOINT) in front of `docqa serve --generator-only`.

Each ask is timed at the client: time to the first answer token (the first `answer` or `reasoning` event),
gaps between events after it, and the wall time of all 16. Contracts and questions come from a folder with
`txt/` and `qa.jsonl` (CUAD's layout); on the device, a copy carried for the run.

    # on the device, after `bash bench/gpu_run.sh build`, with the contracts carried in .cuad/:
    OUT=$OUT bash bench/gpu_run.sh serve
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.local_server import docqa_server, sse
from bench.traces import Trace, stream_figures

ENGINE = {  # as the engine bench's RAG load, with room for three 4k-token chunks and the answer
    "DOCQA_LLM_N_CTX": "16384",
    "DOCQA_LLM_N_PARALLEL": "16",
    "DOCQA_LLM_MAX_QUEUE": "64",
}


def questions(folder: Path, contracts: set[str], count: int) -> list[str]:
    """The first answerable question of each contract, in file order, up to count."""
    seen: set[str] = set()
    chosen = []
    for line in (folder / "qa.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["doc"] in contracts and row["doc"] not in seen and not row.get("is_impossible"):
            seen.add(row["doc"])
            chosen.append(row["question"])
        if len(chosen) == count:
            break
    return chosen


SHAPE = {"top_k": 3, "max_tokens": 256}  # --top-k and --answer-tokens change them (a CPU smoke run)


def ask(base: str, question: str, trace: Trace, out: dict[str, int]) -> None:
    body = {"question": question, **SHAPE, "stream": True, "cache": False, "ignore_eos": True}
    trace.submitted = time.perf_counter()
    with httpx.stream("POST", f"{base}/v1/ask", json=body, timeout=900) as r:
        r.raise_for_status()
        for kind, data in sse(r):
            if kind == "error":
                raise RuntimeError(f"{question[:60]}: {data}")
            if kind in ("answer", "reasoning", "done"):
                trace.stamps.append(time.perf_counter())
                if kind == "done":
                    timings = json.loads(data)["timings"]
                    trace.tokens = int(timings["completion_tokens"])
                    out["prompt_tokens"] = max(out.get("prompt_tokens", 0), int(timings["prompt_tokens"]))


def run_at_once(base: str, asked: list[str], tag: str) -> dict[str, float]:
    ask(base, asked[0] + " (warm-up)", Trace(0.0), {})
    traces = [Trace(0.0) for _ in asked]
    seen: dict[str, int] = {}
    threads = [threading.Thread(target=ask, args=(base, q, t, seen)) for q, t in zip(asked, traces, strict=True)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    figures = stream_figures(f"{tag}_16", traces, time.perf_counter() - start)
    figures[f"{tag}_16_prompt_tokens_max"] = seen.get("prompt_tokens", 0)
    figures[f"{tag}_16_tokens_each"] = statistics.median(t.tokens for t in traces)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--cuad", type=Path, required=True, help="a folder with txt/ and qa.jsonl")
    parser.add_argument("--contracts", type=int, default=100)
    parser.add_argument("--out", type=Path, default=Path("gpu_serve_bench.json"))
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--answer-tokens", type=int, default=256)
    args = parser.parse_args()
    SHAPE.update(top_k=args.top_k, max_tokens=args.answer_tokens)
    files = sorted((args.cuad / "txt").glob("*.txt"))[: args.contracts]
    asked = questions(args.cuad, {f"txt/{f.name}" for f in files}, 16)
    out: dict[str, Any] = {"contracts": len(files), "questions": len(asked)}
    with tempfile.TemporaryDirectory() as data:
        env = {**ENGINE, **os.environ, "DOCQA_DATA_DIR": data, "DOCQA_LLM_MODEL": str(args.model)}
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "docqa", "ingest", *map(str, files), "--no-embeddings"], env=env, check=True
        )
        out["ingest_s"] = time.perf_counter() - started
        with docqa_server(env) as (base, _):
            out.update(run_at_once(base, asked, "in_process"))
        node_env = {**env, "DOCQA_DATA_DIR": os.path.join(data, "node")}
        with docqa_server(node_env, "--generator-only") as (node, _):
            # DOCQA_LLM_MODEL: its vocabulary only; the 16th prompt waits for 15 prefills before its first token
            api_env = {**env, "DOCQA_LLM_ENDPOINT": f"{node}/v1", "DOCQA_LLM_ENDPOINT_TIMEOUT_S": "600"}
            with docqa_server(api_env) as (base, _):
                out.update(run_at_once(base, asked, "through_node"))
    for key in ("16_wall_s", "16_ttft_p50_s", "16_ttft_max_s"):
        out[f"ratio_{key}"] = out[f"through_node_{key}"] / out[f"in_process_{key}"]
    out["through_node_ttft_p50_added_ms"] = (out["through_node_16_ttft_p50_s"] - out["in_process_16_ttft_p50_s"]) * 1000
    text = json.dumps(out, indent=1)
    args.out.write_text(text + "\n")
    print(text, flush=True)


if __name__ == "__main__":
    main()
