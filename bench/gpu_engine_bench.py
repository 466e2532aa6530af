"""docqa's batching engine on a GPU, on RAG-shaped requests, measured next to llama.cpp's own tools.

Run on the device after llama.cpp and llama-cpp-python are built there (bench/gpu_run.sh does it all).
Prints one Markdown table last and writes the figures as JSON.

usage: python bench/gpu_engine_bench.py --model q14.gguf --bin /path/to/llama.cpp/build/bin [--out results.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import llama_cpp  # before numpy: the reverse order crashed model loading on the H200 device

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.targets import target_table  # noqa: E402
from docqa.engine.batching import BatchingGenerator  # noqa: E402
from docqa.engine.step_timing import StepTiming  # noqa: E402
from docqa.generation import NON_THINKING_SAMPLING, SamplingParams  # noqa: E402
from docqa.settings import LLMSettings  # noqa: E402


@dataclass
class Trace:
    submitted: float
    stamps: list[float] = field(default_factory=list)  # arrival time of every streamed piece
    tokens: int = 0

    @property
    def ttft(self) -> float:
        return self.stamps[0] - self.submitted

    @property
    def finished(self) -> float:
        return self.stamps[-1]


def make_prompt(engine: BatchingGenerator, n_tokens: int, salt: int) -> str:
    """A distinct prompt of about n_tokens tokens (random words, so no two share a prefix)."""
    import random

    rng = random.Random(salt)
    words = [f"{rng.choice('bcdfghjklmnpqrstvwz')}{rng.randrange(10**6)}" for _ in range(n_tokens)]
    text = f"Request {salt}: " + " ".join(words)
    while engine.count_tokens(text) > n_tokens:
        text = text[: int(len(text) * 0.98)]
    return text


def run_requests(engine: BatchingGenerator, prompts: list[str], params: SamplingParams) -> tuple[list[Trace], float]:
    """Submit every prompt at once and read the streams on one event loop, as `docqa serve` does."""

    async def consume(prompt: str, trace: Trace) -> None:
        trace.submitted = time.perf_counter()
        async for event in engine.submit(prompt, params, asyncio.get_running_loop()):
            if event.kind == "text":
                trace.stamps.append(time.perf_counter())
            elif event.kind == "finished":
                trace.tokens = event.completion_tokens
                trace.stamps.append(time.perf_counter())
            else:
                raise RuntimeError(event.text)

    async def run_all() -> tuple[list[Trace], float]:
        traces = [Trace(0.0) for _ in prompts]
        start = time.perf_counter()
        await asyncio.gather(*(consume(p, t) for p, t in zip(prompts, traces, strict=True)))
        return traces, time.perf_counter() - start

    return asyncio.run(run_all())


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def stream_figures(prefix: str, traces: list[Trace], wall: float) -> dict[str, float]:
    """Wall time, time to first token and inter-token latency of concurrent streams, the same for docqa
    and llama-server (gaps between pieces after the first, the final event left out)."""
    gaps = [b - a for t in traces for a, b in zip(t.stamps[1:-1], t.stamps[2:-1], strict=False)]
    return {
        f"{prefix}_wall_s": wall,
        f"{prefix}_ttft_p50_s": statistics.median(t.ttft for t in traces),
        f"{prefix}_ttft_max_s": max(t.ttft for t in traces),
        f"{prefix}_itl_p50_ms": statistics.median(gaps) * 1000,
        f"{prefix}_itl_p95_ms": pct(gaps, 0.95) * 1000,
    }


def llama_tool(bin_dir: Path, tool: str, *args: str) -> str:
    """The standard output of one of llama.cpp's tools."""
    return subprocess.run([str(bin_dir / tool), *args], capture_output=True, text=True, timeout=600).stdout


def rag_settings(**overrides: object) -> LLMSettings:
    """The engine for the RAG-shaped loads: 16 sequences with room for 6,144 prompt + 256 answer tokens."""
    return LLMSettings(
        n_ctx=6144 + 256 + 64,
        n_parallel=16,
        n_batch=2048,
        prefix_cache_slots=2,
        max_queue=64,
        **overrides,  # type: ignore[arg-type]
    )


def ceilings(bin_dir: Path, model: Path, only_64: bool = False) -> dict[str, float]:
    """llama-bench and llama-batched-bench on the same model, in the same run (only_64: npl 64 only)."""
    out: dict[str, float] = {}

    if not only_64:
        bench = llama_tool(
            bin_dir, "llama-bench", "-m", str(model), "-p", "6144", "-n", "128", "-fa", "1", "-ngl", "99", "-o", "json"
        )
        for row in json.loads(bench):
            key = "pp6144" if row["n_prompt"] else "tg128"
            out[f"llama_bench_{key}_tps"] = float(row["avg_ts"])
    for npp, ntg, npl in ((6144, 256, "1,16"), (512, 256, "64"))[1 if only_64 else 0 :]:
        text = llama_tool(
            bin_dir,
            "llama-batched-bench",
            "-m",
            str(model),
            "-c",
            str((npp + ntg) * 64 if npl == "64" else (npp + ntg) * 16),
            "-b",
            "2048",
            "-ub",
            "512",
            "-npp",
            str(npp),
            "-ntg",
            str(ntg),
            "-npl",
            npl,
            "-ngl",
            "99",
            "-fa",
            "on",
        )
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 10 and cells[0].isdigit():
                pl, total_s, s_tg = int(cells[2]), float(cells[8]), float(cells[7])
                out[f"batched_npp{npp}_npl{pl}_total_s"] = total_s
                out[f"batched_npp{npp}_npl{pl}_tg_tps"] = s_tg
    return out


def engine_phases(model: Path, tag: str, only_64: bool = False, **overrides: Any) -> dict[str, float]:
    """docqa's engine on every RAG-shaped load (only_64: 64 x 512 only); keys start with `tag`;
    overrides: LLMSettings fields (the way of sampling). Step timings say where each phase's time
    went (batch building, llama_decode, waiting for the sampled tokens, streaming)."""
    out: dict[str, float] = {}
    rag = replace(NON_THINKING_SAMPLING, max_tokens=256, ignore_eos=True, seed=1)
    if not only_64:
        out.update(_rag_phases(model, tag, rag, overrides))
    out.update(_short_phase(model, tag, rag, overrides))
    return out


def _rag_phases(model: Path, tag: str, rag: SamplingParams, overrides: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    engine = BatchingGenerator(model, rag_settings(**overrides))
    out[f"{tag}_sampling_on_backend"] = engine.memory_report()["sampling_on_backend"]
    prompts = [make_prompt(engine, 6144, i) for i in range(17)]
    run_requests(engine, [prompts[16][:2000]], replace(rag, max_tokens=8))  # warm-up

    def timing(phase: str) -> None:
        for key, value in engine.timing.report().items():
            out[f"{tag}_{phase}_step_{key}"] = value
        engine.timing = StepTiming()

    # Decode from an empty context, as llama-bench tg128 measures it: the mean of 5 requests, as
    # llama-bench averages 5 repetitions (one request's rate moved by 2-4% from run to run).
    engine.timing = StepTiming()
    rates = []
    for _ in range(5):
        (short,), _ = run_requests(engine, ["Summarise the agreement."], rag)
        rates.append((short.tokens - 1) / (short.finished - short.stamps[0]))
    out[f"{tag}_single_decode_depth0_tps"] = statistics.mean(rates)
    out[f"{tag}_single_decode_depth0_tps_min"] = min(rates)
    out[f"{tag}_single_decode_depth0_tps_max"] = max(rates)
    timing("single_depth0")
    (single,), _ = run_requests(engine, [prompts[0]], rag)
    out[f"{tag}_single_ttft_s"] = single.ttft
    out[f"{tag}_single_decode_depth6144_tps"] = (single.tokens - 1) / (single.finished - single.stamps[0])
    timing("single_depth6144")

    # A new question over the same chunks: same long prefix, a different tail.
    (again,), _ = run_requests(
        engine, [prompts[0] + " Which clause sets the notice period?"], replace(rag, max_tokens=8)
    )
    out[f"{tag}_prefix_reuse_ttft_s"] = again.ttft

    engine.timing = StepTiming()
    traces, wall = run_requests(engine, prompts[1:17], rag)
    out.update(stream_figures(f"{tag}_16x6144", traces, wall))
    out[f"{tag}_16x6144_sampling_mode_switches"] = engine.samplers.mode_switches
    timing("16x6144")
    engine.close()
    return out


def _short_phase(model: Path, tag: str, rag: SamplingParams, overrides: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    short_settings = LLMSettings(
        n_ctx=800, n_parallel=64, n_batch=2048, prefix_cache_slots=0, max_queue=64, **overrides
    )
    engine = BatchingGenerator(model, short_settings)
    prompts = [make_prompt(engine, 512, 100 + i) for i in range(64)]
    run_requests(engine, prompts[:2], replace(rag, max_tokens=8))  # warm-up: chains and graphs for this context
    engine.timing = StepTiming()
    traces, wall = run_requests(engine, prompts, rag)
    all_decoding = max(t.stamps[0] for t in traces)
    first_done = min(t.finished for t in traces)
    in_window = sum(1 for t in traces for s in t.stamps[:-1] if all_decoding <= s <= first_done)
    out[f"{tag}_64x512_aggregate_decode_tps"] = in_window / max(first_done - all_decoding, 1e-9)
    out[f"{tag}_64x512_wall_s"] = wall
    out[f"{tag}_64x512_sampling_mode_switches"] = engine.samplers.mode_switches
    if (group := engine.samplers.block_top_k) is not None:
        out[f"{tag}_64x512_block_top_k_graphs_built"] = group.graphs_built
        out[f"{tag}_64x512_block_top_k_errors"] = group.errors
    for key, value in engine.timing.report().items():
        out[f"{tag}_64x512_step_{key}"] = value
    engine.close()
    return out


def single_stream_variants(bin_dir: Path | None, model: Path, repeats: int = 5) -> dict[str, float]:
    """Single-stream decode from an empty context under each way of sampling, in turns, with llama-bench
    tg128 before and after them: the top-k of a whole chain in the graph from two levels of block
    maxima (the default), from one, or llama.cpp's top-k; greedy (no top-k at all); the graph keeping
    the top-k and the host drawing."""
    out: dict[str, float] = {}
    rag = replace(NON_THINKING_SAMPLING, max_tokens=256, ignore_eos=True, seed=1)
    variants: dict[str, tuple[dict[str, object], SamplingParams]] = {
        "block_chain": ({"block_top_k": True}, rag),
        "one_level_block_chain": ({"block_top_k_short_sorts": False}, rag),
        "llama_top_k_chain": ({"block_top_k": False}, rag),
        "greedy": ({}, replace(rag, temperature=0.0)),
        "host_draw_block": ({"batched_sampling_from": 1}, rag),
    }
    tg: list[float] = []

    def llama_bench_tg() -> None:
        if bin_dir is None:
            return
        text = llama_tool(
            bin_dir, "llama-bench", "-m", str(model), "-p", "0", "-n", "128", "-fa", "1", "-ngl", "99", "-o", "json"
        )
        tg.extend(float(row["avg_ts"]) for row in json.loads(text))

    llama_bench_tg()
    for name, (overrides, params) in variants.items():
        engine = BatchingGenerator(model, rag_settings(**overrides))
        run_requests(engine, ["Warm up the graphs."], replace(params, max_tokens=8))
        rates = []
        for _ in range(repeats):
            (trace,), _ = run_requests(engine, ["Summarise the agreement."], params)
            rates.append((trace.tokens - 1) / (trace.finished - trace.stamps[0]))
        out[f"single_{name}_tps_median"] = statistics.median(rates)
        out[f"single_{name}_tps_max"] = max(rates)
        engine.close()
    llama_bench_tg()
    if tg:
        out["llama_bench_tg128_tps_runs"] = len(tg)
        out["llama_bench_tg128_tps_min"] = min(tg)
        out["llama_bench_tg128_tps_max"] = max(tg)
        for name in variants:
            out[f"single_{name}_share_of_tg128"] = out[f"single_{name}_tps_median"] / statistics.mean(tg)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--bin", type=Path, default=None, help="llama.cpp build/bin, for the ceilings")
    ap.add_argument("--out", type=Path, default=Path("gpu_bench.json"))
    ap.add_argument("--skip-sequential", action="store_true")
    ap.add_argument("--skip-server", action="store_true", help="do not run llama-server -np 16")
    ap.add_argument("--host-sampling-too", action="store_true", help="also run the engine sampling on the host")
    ap.add_argument(
        "--graph-sampling-too", action="store_true", help="also run the engine with every chain in the graph"
    )
    ap.add_argument("--only-64", action="store_true", help="only the 64 x 512 load (and its batched-bench ceiling)")
    ap.add_argument(
        "--per-row-top-k-too", action="store_true", help="also run the engine with llama.cpp's top-k, one per row"
    )
    ap.add_argument("--one-level-too", action="store_true", help="also run the engine with the one-level block top-k")
    ap.add_argument("--reverse-variants", action="store_true", help="run the engine's ways of sampling last first")
    ap.add_argument(
        "--single-variants", action="store_true", help="only single-stream decode, under each way of sampling"
    )
    args = ap.parse_args()
    results: dict[str, float] = {}

    def note(part: dict[str, float]) -> None:
        results.update(part)
        print(json.dumps(part), file=sys.stderr, flush=True)
        args.out.write_text(json.dumps(results, indent=2))  # what is done survives a later failure

    if args.single_variants:
        note(single_stream_variants(args.bin, args.model))
        return
    if args.bin:
        note(ceilings(args.bin, args.model, args.only_64))
    variants: list[tuple[str, dict[str, Any]]] = [("docqa", {})]
    if args.one_level_too:
        variants.append(("docqa_one_level", {"block_top_k_short_sorts": False}))
    if args.reverse_variants:  # the same variants, last first: no way of sampling always runs first
        variants.reverse()
    if args.per_row_top_k_too:
        variants.append(("docqa_per_row_top_k", {"block_top_k": False}))
    for tag, overrides in variants:
        note(engine_phases(args.model, tag, only_64=args.only_64, **overrides))
    every_load: list[tuple[str, dict[str, Any]]] = []  # these run every load, --only-64 or not
    if args.graph_sampling_too:
        every_load.append(("docqa_graph_only", {"batched_sampling_from": 0}))
    if args.host_sampling_too:
        every_load.append(("docqa_host_sampling", {"backend_sampling": False}))
    for tag, overrides in every_load:
        note(engine_phases(args.model, tag, **overrides))
    if args.bin and not args.skip_server:
        note(llama_server_run(args.bin, args.model))
    if not args.skip_sequential:
        note({"llama_cpp_python_sequential_16_s": sequential_baseline(args.model)})

    print("| figure | value |\n|---|---|")
    for k, v in results.items():
        print(f"| {k} | {v:.3f} |")
    print()
    print(target_table(results, [tag for tag, _ in variants + every_load]))


def llama_server_run(bin_dir: Path, model: Path, port: int = 8089) -> dict[str, float]:
    """llama.cpp's own continuous batching: the same 16 RAG-shaped requests sent at once to
    `llama-server -np 16` (EOS ignored, no prompt cache), streamed, timed the same way."""
    import random
    import urllib.request

    server = subprocess.Popen(
        [
            str(bin_dir / "llama-server"),
            "-m",
            str(model),
            "-np",
            "16",
            "-c",
            "131072",
            "-ngl",
            "99",
            "-fa",
            "on",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("llama-server did not come up")
            time.sleep(1)
        rng = random.Random(2000)

        def body(n_prompt: int, n_predict: int) -> bytes:
            prompt = [rng.randrange(1000, 150000) for _ in range(n_prompt)]
            return json.dumps(
                {
                    "prompt": prompt,
                    "n_predict": n_predict,
                    "stream": True,
                    "ignore_eos": True,
                    "cache_prompt": False,
                    "temperature": 0.7,
                    "top_p": 0.8,
                    "top_k": 20,
                    "min_p": 0.0,
                }
            ).encode()

        def consume(payload: bytes, trace: Trace) -> None:
            req = urllib.request.Request(
                f"{base}/completion", data=payload, headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=600) as r:
                for line in r:
                    if line.startswith(b"data: "):
                        trace.stamps.append(time.perf_counter())

        warm = Trace(time.perf_counter())
        consume(body(2000, 8), warm)
        payloads = [body(6144, 256) for _ in range(16)]
        traces = [Trace(0.0) for _ in payloads]
        threads = [threading.Thread(target=consume, args=(p, t)) for p, t in zip(payloads, traces, strict=True)]
        start = time.perf_counter()
        for t, trace in zip(threads, traces, strict=True):
            trace.submitted = time.perf_counter()
            t.start()
        for t in threads:
            t.join()
        return stream_figures("llama_server_16x6144", traces, time.perf_counter() - start)
    finally:
        server.terminate()
        server.wait(timeout=30)


def sequential_baseline(model: Path) -> float:
    """What llama-cpp-python's own server does: the same 16 requests, one after another."""
    import random

    llm = llama_cpp.Llama(str(model), n_ctx=6144 + 320, n_gpu_layers=-1, flash_attn=True, verbose=False)
    rng = random.Random(1000)
    prompts = [[rng.randrange(1000, 150000) for _ in range(6144)] for _ in range(16)]
    no_eos = {llm.token_eos(): -1e9, 151645: -1e9}  # random weights: make every request run 256 tokens
    start = time.perf_counter()
    for prompt in prompts:
        stream = llm.create_completion(
            prompt, max_tokens=256, stream=True, temperature=0.7, top_p=0.8, top_k=20, min_p=0.0, logit_bias=no_eos
        )
        for _ in stream:
            pass
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
