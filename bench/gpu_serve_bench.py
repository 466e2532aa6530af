"""The whole path on the GPU, as users see it: 16 CUAD questions asked at once, streamed, through a real
`docqa serve` over CUAD contracts ingested with BM25 (top 3 chunks, 256 answer tokens each, EOS ignored,
the answer cache off), in three set-ups:

1. `docqa serve` with the batching engine in-process;
2. a docqa API process with no model (DOCQA_LLM_ENDPOINT) in front of `docqa serve --generator-only`;
3. the same API process in front of `llama-server -np 16` (with --bin): llama.cpp's server fed the very prompts
   docqa rendered (`/v1/completions`, the same token counts).

With --rounds N the three run N times, one after the other each round, so that drift on the host shows.
With --fifo, 1 and 2 run again with the engine reading prompts first come, first read (bench/fifo_docqa.py),
the order before shortest-first; with --threads 4, again with llama.cpp on 4 CPU threads. With
--baseline-code DIR, set-up 1 again with an older commit's code (`BASELINE=<commit> bash bench/gpu_prepare.sh`
writes it to .baseline/), which ingests the contracts itself: an issue's figures re-measured on the host at hand.

Each ask is timed at the client: time to the first answer token (the first `answer` or `reasoning` event),
gaps between events after it, and the wall time of all 16. Contracts and questions come from a folder with
`txt/` and `qa.jsonl` (CUAD's layout); on the device, a copy carried for the run.

    # on the device, after `bash bench/gpu_run.sh build`, with the contracts carried in .cuad/:
    OUT=$OUT bash bench/gpu_run.sh serve        # EXTRA="--rounds 2"
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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.local_server import docqa_server, llama_server, sse
from bench.traces import Trace, stream_figures

ENGINE = {  # as the engine bench's RAG load, with room for three 4k-token chunks and the answer
    "DOCQA_LLM_N_CTX": "16384",
    "DOCQA_LLM_N_PARALLEL": "16",
    "DOCQA_LLM_MAX_QUEUE": "64",
    "DOCQA_API_BENCHMARK_REQUESTS": "true",  # ignore_eos: every answer as long as llama-server's
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


def ask(base: str, question: str, trace: Trace, out: dict[str, int], client: httpx.Client | None = None) -> None:
    """One streamed ask, timed from before its request is made. client: the run's shared client (its
    connections kept open, as a browser's or an application's are); None: a client of its own, made in the
    ask's time (the runs before 2026-12-06 did so: 16 made at once cost up to ~0.25 s of the client's CPU)."""
    body = {"question": question, **SHAPE, "stream": True, "cache": False, "ignore_eos": True}
    trace.submitted = time.perf_counter()
    opened = (client or httpx).stream("POST", f"{base}/v1/ask", json=body, timeout=900)
    with opened as r:
        r.raise_for_status()
        for kind, data in sse(r):
            if kind == "error":
                raise RuntimeError(f"{question[:60]}: {data}")
            if kind == "citations":
                trace.sources = time.perf_counter()
            if kind in ("answer", "reasoning", "done"):
                trace.stamps.append(time.perf_counter())
                if kind == "done":
                    timings = json.loads(data)["timings"]
                    trace.tokens = int(timings["completion_tokens"])
                    out[question] = int(timings["prompt_tokens"])
                    trace.retrieval_ms = float(timings["retrieval_ms"])


CLIENT = {"per_ask": False}  # --client-per-ask: every ask makes its own HTTP client, as runs before 2026-12-06


def run_at_once(base: str, asked: list[str], tag: str) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=len(asked) + 1, max_keepalive_connections=len(asked) + 1)
    with httpx.Client(limits=limits) as shared:
        client = None if CLIENT["per_ask"] else shared
        ask(base, asked[0] + " (warm-up)", Trace(0.0), {}, client)
        traces = [Trace(0.0) for _ in asked]
        seen: dict[str, int] = {}
        threads = [
            threading.Thread(target=ask, args=(base, q, t, seen, client)) for q, t in zip(asked, traces, strict=True)
        ]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    figures: dict[str, Any] = stream_figures(f"{tag}_16", traces, time.perf_counter() - start)
    figures[f"{tag}_16_prompt_tokens_max"] = max(seen.values())
    # each ask's prompt tokens and first-token time, in the order they were read: the median's make-up
    asks = [(seen[q], round(t.ttft, 3)) for q, t in zip(asked, traces, strict=True)]
    figures[f"{tag}_16_prompt_tokens_and_ttft"] = sorted(asks, key=lambda pair: pair[1])
    # when each ask's prompt left the API process (its citations event), from the start: the arrivals
    # the engine orders its reading by, which a node could delay
    sent = sorted((round((t.sources or start) - start, 3), seen[q]) for q, t in zip(asked, traces, strict=True))
    figures[f"{tag}_16_sources_s_and_prompt_tokens"] = sent
    figures[f"{tag}_16_tokens_each"] = statistics.median(t.tokens for t in traces)
    # the API process's own time for each ask's retrieval (docqa's timings), in arrival order
    figures[f"{tag}_16_retrieval_ms"] = [round(t.retrieval_ms, 1) for t in sorted(traces, key=lambda t: t.sources or 0)]
    figures[f"{tag}_16_client"] = "per_ask" if CLIENT["per_ask"] else "shared"
    return figures


def api_env(env: dict[str, str], upstream: str) -> dict[str, str]:
    """A docqa API process generating through `upstream`. DOCQA_LLM_MODEL stays: its vocabulary only; the
    16th prompt waits for 15 prefills before its first token, hence the long timeout."""
    return {**env, "DOCQA_LLM_ENDPOINT": f"{upstream}/v1", "DOCQA_LLM_ENDPOINT_TIMEOUT_S": "600"}


def docqa_pair(env: dict[str, str], data: str, asked: list[str], module: str, tag: str) -> dict[str, Any]:
    """Set-ups 1 and 2: in-process, then an API process in front of a generator-only node."""
    out: dict[str, Any] = {}
    with docqa_server(env, module=module) as (base, _):
        out.update(run_at_once(base, asked, f"{tag}in_process"))
    node_env = {**env, "DOCQA_DATA_DIR": os.path.join(data, "node")}
    with (
        docqa_server(node_env, "--generator-only", module=module) as (node, _),
        docqa_server(api_env(env, node)) as (base, _),
    ):
        out.update(run_at_once(base, asked, f"{tag}through_node"))
    for key in ("16_wall_s", "16_ttft_p50_s", "16_ttft_max_s"):
        out[f"{tag}ratio_{key}"] = out[f"{tag}through_node_{key}"] / out[f"{tag}in_process_{key}"]
    added = out[f"{tag}through_node_16_ttft_p50_s"] - out[f"{tag}in_process_16_ttft_p50_s"]
    out[f"{tag}through_node_ttft_p50_added_ms"] = added * 1000
    return out


def parse_variant(spec: str) -> tuple[str, dict[str, str], bool]:
    """ "NAME:KEY=VALUE,..." -> (name, the environment it sets, whether each ask makes its own client)."""
    name, _, pairs = spec.partition(":")
    if not name or any("=" not in pair for pair in pairs.split(",") if pair):
        raise ValueError(f"--variant {spec!r}: expected NAME:KEY=VALUE,...")
    settings = dict(pair.split("=", 1) for pair in pairs.split(",") if pair)
    client = settings.pop("client", "shared")
    if client not in ("shared", "per_ask"):
        raise ValueError(f"--variant {spec!r}: client is shared or per_ask")
    return name, settings, client == "per_ask"


def variant_in_process(env: dict[str, str], asked: list[str], spec: str, cwd: str | None = None) -> dict[str, Any]:
    """Set-up 1 again with other settings: spec "NAME:KEY=VALUE,..." (environment variables; `client=per_ask`
    makes every ask make its own HTTP client), its figures under "NAME_in_process"; cwd: where the server
    runs (an older checkout's folder runs that code)."""
    name, settings, per_ask = parse_variant(spec)
    before, CLIENT["per_ask"] = CLIENT["per_ask"], per_ask
    try:
        with docqa_server({**env, **settings}, cwd=cwd) as (base, _):
            return run_at_once(base, asked, f"{name}_in_process")
    finally:
        CLIENT["per_ask"] = before


def baseline_ingested(code: Path, env: dict[str, str], data: str, files: list[Path]) -> dict[str, Any]:
    """The contracts ingested again by an older checkout's code (`code`: a folder holding its docqa/ and
    ingest/, and COMMIT naming it) into a data home of its own, which that code's schema and readers made:
    its server's environment, its folder and the ingest's figures."""
    home = os.path.join(data, "baseline")
    baseline_env = {**env, "DOCQA_DATA_DIR": home}
    started = time.perf_counter()
    command = [sys.executable, "-m", "docqa", "ingest", *(str(f.resolve()) for f in files), "--no-embeddings"]
    subprocess.run(command, env=baseline_env, cwd=code, check=True)
    commit = (code / "COMMIT").read_text().strip() if (code / "COMMIT").exists() else str(code)
    return {"env": baseline_env, "cwd": str(code), "ingest_s": time.perf_counter() - started, "commit": commit}


def one_round(
    env: dict[str, str],
    data: str,
    asked: list[str],
    bin_dir: Path | None,
    model: Path,
    fifo: bool,
    threads: list[int],
    variants: Sequence[str] = (),
    baseline: dict[str, Any] | None = None,
) -> dict[str, Any]:
    out = docqa_pair(env, data, asked, "docqa", "")
    for spec in variants:
        out.update(variant_in_process(env, asked, spec))
    if baseline is not None:  # the older code as its runs were made: each ask its own client
        out.update(variant_in_process(baseline["env"], asked, "baseline:client=per_ask", baseline["cwd"]))
    for n in threads:  # llama.cpp's CPU threads: all cores by default, spinning beside the node's API process
        out.update(docqa_pair({**env, "DOCQA_LLM_N_THREADS": str(n)}, data, asked, "docqa", f"threads{n}_"))
    if fifo:
        out.update(docqa_pair(env, data, asked, "bench.fifo_docqa", "fifo_"))
    if bin_dir is not None:
        # 16 slots of the engine's 16,384 tokens each
        with llama_server(bin_dir, model, 16 * 16384) as upstream, docqa_server(api_env(env, upstream)) as (base, _):
            out.update(run_at_once(base, asked, "through_llama_server"))
    return out


def add_load_options(parser: argparse.ArgumentParser, out: str) -> None:
    """The options of the whole path's load, which bench/gpu_engine_same_prompts.py shares."""
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--cuad", type=Path, required=True, help="a folder with txt/ and qa.jsonl")
    parser.add_argument("--contracts", type=int, default=100)
    parser.add_argument("--out", type=Path, default=Path(out))
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--answer-tokens", type=int, default=256)


def contract_files(args: argparse.Namespace) -> list[Path]:
    """The first --contracts CUAD contracts, in name order."""
    return sorted((args.cuad / "txt").glob("*.txt"))[: args.contracts]


@contextmanager
def contracts_ingested(args: argparse.Namespace) -> Iterator[tuple[str, dict[str, str], list[str], dict[str, Any]]]:
    """A temporary data home with the first --contracts CUAD contracts ingested (BM25): the data home, the
    docqa servers' environment, the 16 questions, and the figures so far (counts, the ingest's time)."""
    SHAPE.update(top_k=args.top_k, max_tokens=args.answer_tokens)
    files = contract_files(args)
    asked = questions(args.cuad, {f"txt/{f.name}" for f in files}, 16)
    out: dict[str, Any] = {"contracts": len(files), "questions": len(asked)}
    with tempfile.TemporaryDirectory() as data:
        env = {**ENGINE, **os.environ, "DOCQA_DATA_DIR": data, "DOCQA_LLM_MODEL": str(args.model)}
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "docqa", "ingest", *map(str, files), "--no-embeddings"], env=env, check=True
        )
        out["ingest_s"] = time.perf_counter() - started
        yield data, env, asked, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_load_options(parser, "gpu_serve_bench.json")
    parser.add_argument("--bin", type=Path, default=None, help="llama.cpp build/bin: also through llama-server")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--fifo", action="store_true", help="also 1 and 2 with prompts read first come, first read")
    parser.add_argument(
        "--threads", default="", help="also 1 and 2 with llama.cpp on this many CPU threads each (comma-separated)"
    )
    parser.add_argument(
        "--client-per-ask", action="store_true", help="each ask makes its own HTTP client (the runs before 2026-12-06)"
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="also set-up 1 with other settings, each round: NAME:KEY=VALUE,... (environment; client=per_ask)",
    )
    parser.add_argument(
        "--baseline-code",
        type=Path,
        default=None,
        help="also set-up 1, each round, with an older checkout's code (a folder with its docqa/, ingest/ and "
        "COMMIT), which ingests the contracts itself; each ask its own client, as its runs were made",
    )
    args = parser.parse_args()
    for spec in args.variant:  # a malformed one fails now, not after minutes of device time
        parse_variant(spec)
    CLIENT["per_ask"] = args.client_per_ask
    threads = [int(count) for count in args.threads.split(",") if count.strip()]
    with contracts_ingested(args) as (data, env, asked, out):
        baseline = None
        if args.baseline_code is not None:
            baseline = baseline_ingested(args.baseline_code.resolve(), env, data, contract_files(args))
            out.update(baseline_commit=baseline["commit"], baseline_ingest_s=baseline["ingest_s"])
        for n in range(args.rounds):
            figures = one_round(env, data, asked, args.bin, args.model, args.fifo, threads, args.variant, baseline)
            out.update({f"r{n + 1}_{key}": value for key, value in figures.items()})
            print(json.dumps(figures), flush=True)
    text = json.dumps(out, indent=1)
    args.out.write_text(text + "\n")
    print(text, flush=True)


if __name__ == "__main__":
    main()
