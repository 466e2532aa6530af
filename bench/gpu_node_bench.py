"""Generation through HTTP against in-process, on the GPU: the batching engine called directly, then the
same engine behind `docqa serve --generator-only`, driven by the endpoint generator an API process uses
(DOCQA_LLM_ENDPOINT). The same model, prompts and settings as gpu_engine_bench's RAG load: one 6,144-token
request alone (TTFT), then 16 of them at once with 256 answer tokens each (EOS ignored). With --bin, the
same client also drives `llama-server -np 16` (as gpu_engine_bench starts it): llama.cpp's server as
the endpoint instead of a docqa node.

    # on the device, after `bash bench/gpu_run.sh build`:
    OUT=$OUT bash bench/gpu_run.sh node
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import llama_cpp  # noqa: F401  (before numpy: the reverse order crashed model loading on the H200 device)

from bench.gpu_engine_bench import make_prompt, rag_settings, run_requests
from bench.local_server import llama_server, wait_healthy
from bench.machine_state import gpu_state
from bench.traces import stream_figures
from docqa.core.sampling_params import NON_THINKING_SAMPLING, SamplingParams
from docqa.engine.batching import BatchingGenerator
from docqa.remote.openai_generator import OpenAIGenerator

RAG = replace(NON_THINKING_SAMPLING, max_tokens=256, ignore_eos=True, seed=1)
PORT = 18231


def _phases(generator: Any, prompts: list[str], tag: str, rag: SamplingParams) -> dict[str, float]:
    """The warm-up (the last prompt's head), one request alone, then the others at once."""
    out: dict[str, float] = {}
    run_requests(generator, [prompts[-1][:2000]], replace(rag, max_tokens=8))
    (single,), _ = run_requests(generator, [prompts[0]], rag)
    out[f"{tag}_single_ttft_s"] = single.ttft
    out[f"{tag}_single_decode_tps"] = single.decode_rate
    traces, wall = run_requests(generator, prompts[1:-1], rag)
    out.update(stream_figures(f"{tag}_16x6144", traces, wall))
    return out


def _node_env(model: Path, data: str) -> dict[str, str]:
    settings = rag_settings()
    return {
        **os.environ,
        "DOCQA_LLM_MODEL": str(model),
        "DOCQA_LLM_N_CTX": str(settings.n_ctx),
        "DOCQA_LLM_N_PARALLEL": str(settings.n_parallel),
        **({"DOCQA_LLM_N_BATCH": str(settings.n_batch)} if settings.n_batch else {}),
        "DOCQA_LLM_PREFIX_CACHE_SLOTS": str(settings.prefix_cache_slots),
        "DOCQA_LLM_MAX_QUEUE": str(settings.max_queue),
        "DOCQA_DATA_DIR": data,
    }


def _through(url: str, prompts: list[str], tag: str, rag: SamplingParams) -> dict[str, float]:
    """The endpoint generator an API process uses, against the server at url."""
    client = OpenAIGenerator(
        f"{url}/v1",
        model=None,
        api_key=None,
        timeout_s=300,
        max_in_flight=64,
        n_ctx=rag_settings().n_ctx,
        prompt_format="plain",
        count_tokens=lambda text: len(text.split()),
        tokenizer_label="words (the prompts are sent as they are)",
    )
    try:
        return _phases(client, prompts, tag, rag)
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("gpu_node_bench.json"))
    parser.add_argument("--bin", type=Path, default=None, help="llama.cpp build/bin: also through llama-server")
    # smaller loads for a smoke run on a CPU (the figures' names keep saying 16x6144)
    parser.add_argument("--prompt-tokens", type=int, default=6144)
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--answer-tokens", type=int, default=256)
    args = parser.parse_args()
    rag = replace(RAG, max_tokens=args.answer_tokens)
    out: dict[str, Any] = gpu_state("start")
    engine = BatchingGenerator(args.model, rag_settings())
    prompts = [make_prompt(engine, args.prompt_tokens, i) for i in range(args.requests + 2)]
    count = engine.count_tokens
    out.update(_phases(engine, prompts, "in_process", rag))
    counts = [count(p) for p in prompts]
    engine.close()
    out["prompt_tokens_min"], out["prompt_tokens_max"] = min(counts), max(counts)

    url = f"http://127.0.0.1:{PORT}"
    with tempfile.TemporaryDirectory() as data:
        command = [sys.executable, "-m", "docqa", "serve", "--generator-only", "--port", str(PORT)]
        node = subprocess.Popen(command, env=_node_env(args.model, data), stdout=subprocess.DEVNULL)
        try:
            wait_healthy(url, node)
            out.update(_through(url, prompts, "through_node", rag))
        finally:
            node.terminate()
            node.wait(60)
    if args.bin is not None:
        with llama_server(args.bin, args.model, 131072, quiet=True) as upstream:
            out.update(_through(upstream, prompts, "through_llama_server", rag))
    for key in ("single_ttft_s", "16x6144_wall_s", "16x6144_ttft_p50_s", "16x6144_itl_p50_ms"):
        out[f"ratio_{key}"] = out[f"through_node_{key}"] / out[f"in_process_{key}"]
    text = json.dumps(out, indent=1)
    args.out.write_text(text + "\n")
    print(text, flush=True)


if __name__ == "__main__":
    main()
