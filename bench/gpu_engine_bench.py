"""docqa's batching engine on a GPU, on RAG-shaped requests, measured next to llama.cpp's own tools.

Run on the device after llama.cpp and llama-cpp-python are built there (bench/gpu_run.sh does it all).
Prints one Markdown table last and writes the figures as JSON.

usage: python bench/gpu_engine_bench.py --model q14.gguf --bin /path/to/llama.cpp/build/bin [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import llama_cpp  # before numpy: the reverse order crashed model loading on the H200 device

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docqa.engine.batching import BatchingGenerator  # noqa: E402
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
    traces: list[Trace] = []
    threads = []
    start = time.perf_counter()

    def consume(prompt: str) -> None:
        trace = Trace(time.perf_counter())
        traces.append(trace)
        for event in engine.submit(prompt, params):
            if event.kind == "text":
                trace.stamps.append(time.perf_counter())
            elif event.kind == "finished":
                trace.tokens = event.completion_tokens
                trace.stamps.append(time.perf_counter())
            else:
                raise RuntimeError(event.text)

    for p in prompts:
        t = threading.Thread(target=consume, args=(p,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    return traces, time.perf_counter() - start


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def ceilings(bin_dir: Path, model: Path) -> dict[str, float]:
    """llama-bench and llama-batched-bench on the same model, in the same run."""
    out: dict[str, float] = {}

    def run(*args: str) -> str:
        return subprocess.run([str(bin_dir / args[0]), *args[1:]], capture_output=True, text=True, timeout=600).stdout

    bench = run("llama-bench", "-m", str(model), "-p", "6144", "-n", "128", "-fa", "1", "-ngl", "99", "-o", "json")
    for row in json.loads(bench):
        key = "pp6144" if row["n_prompt"] else "tg128"
        out[f"llama_bench_{key}_tps"] = float(row["avg_ts"])
    for npp, ntg, npl in ((6144, 256, "1,16"), (512, 256, "64")):
        text = run(
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--bin", type=Path, default=None, help="llama.cpp build/bin, for the ceilings")
    ap.add_argument("--out", type=Path, default=Path("gpu_bench.json"))
    ap.add_argument("--skip-sequential", action="store_true")
    args = ap.parse_args()
    results: dict[str, float] = {}
    if args.bin:
        results.update(ceilings(args.bin, args.model))
        print(json.dumps(results), file=sys.stderr, flush=True)

    rag = replace(NON_THINKING_SAMPLING, max_tokens=256, ignore_eos=True, seed=1)
    settings = LLMSettings(n_ctx=6144 + 256 + 64, n_parallel=16, n_batch=2048, prefix_cache_slots=2, max_queue=64)
    engine = BatchingGenerator(args.model, settings)
    prompts = [make_prompt(engine, 6144, i) for i in range(17)]
    run_requests(engine, [prompts[16][:2000]], replace(rag, max_tokens=8))  # warm-up

    (single,), _ = run_requests(engine, [prompts[0]], rag)
    results["docqa_single_ttft_s"] = single.ttft
    results["docqa_single_decode_tps"] = (single.tokens - 1) / (single.finished - single.stamps[0])

    # A new question over the same chunks: same long prefix, a different tail.
    (again,), _ = run_requests(
        engine, [prompts[0] + " Which clause sets the notice period?"], replace(rag, max_tokens=8)
    )
    results["docqa_prefix_reuse_ttft_s"] = again.ttft

    traces, wall = run_requests(engine, prompts[1:17], rag)
    results["docqa_16x6144_wall_s"] = wall
    results["docqa_16x6144_ttft_p50_s"] = statistics.median(t.ttft for t in traces)
    results["docqa_16x6144_ttft_max_s"] = max(t.ttft for t in traces)
    gaps = [b - a for t in traces for a, b in zip(t.stamps[1:-1], t.stamps[2:-1], strict=False)]
    results["docqa_16x6144_itl_p50_ms"] = statistics.median(gaps) * 1000
    results["docqa_16x6144_itl_p95_ms"] = pct(gaps, 0.95) * 1000
    engine.close()

    short = LLMSettings(n_ctx=800, n_parallel=64, n_batch=2048, prefix_cache_slots=0, max_queue=64)
    engine = BatchingGenerator(args.model, short)
    prompts = [make_prompt(engine, 512, 100 + i) for i in range(64)]
    traces, wall = run_requests(engine, prompts, rag)
    all_decoding = max(t.stamps[0] for t in traces)
    first_done = min(t.finished for t in traces)
    in_window = sum(1 for t in traces for s in t.stamps[:-1] if all_decoding <= s <= first_done)
    results["docqa_64x512_aggregate_decode_tps"] = in_window / max(first_done - all_decoding, 1e-9)
    results["docqa_64x512_wall_s"] = wall
    engine.close()

    if not args.skip_sequential:
        results["llama_cpp_python_sequential_16_s"] = sequential_baseline(args.model)

    args.out.write_text(json.dumps(results, indent=2))
    print("| figure | value |\n|---|---|")
    for k, v in results.items():
        print(f"| {k} | {v:.3f} |")


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
