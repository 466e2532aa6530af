"""The engine alone on the whole path's own prompts, then the whole path in-process, on one host: what
HTTP, retrieval and the answer's events add to the batching engine (issue 29's target: the whole path's wall
within 5% of the engine-only figure for the same prompt sizes).

The 16 CUAD questions of bench/gpu_serve_bench.py are prepared in-process as `docqa serve` prepares them
(retrieval, the prompt windows, Qwen's template; top 3 chunks, 256 answer tokens, EOS ignored); their
prompts go straight to the engine (`generator.submit`, 16 at once from threads, timed as the streams'
events come). Then `docqa serve` in-process answers the same 16 questions through HTTP, as
gpu_serve_bench.py's set-up (1). Both after a warm-up ask.

    # on the device, after `bash bench/gpu_run.sh build`, with the contracts carried in .cuad/:
    OUT=$OUT bash bench/gpu_run.sh same_prompts
"""

from __future__ import annotations

import contextlib

# llama.cpp before numpy and pydantic, as docqa's CLI imports it: the other order crashed the first model
# load of a process on the H200 device
with contextlib.suppress(ImportError):
    import llama_cpp  # noqa: F401

import argparse
import json
import os
import threading
import time
from typing import Any

from bench.gpu_serve_bench import SHAPE, add_load_options, contracts_ingested, run_at_once
from bench.local_server import docqa_server
from bench.traces import Trace, stream_figures
from docqa.core.requests import AskRequest
from docqa.core.sampling_params import SamplingParams
from docqa.core.settings import Settings
from docqa.service import DocQA


def prepared(qa: DocQA, question: str) -> tuple[str, SamplingParams, int]:
    """The prompt, sampling and prompt tokens `docqa serve` would generate with for this ask (the
    service's own preparation: retrieval, windows, template)."""
    top_k, max_tokens = SHAPE["top_k"], SHAPE["max_tokens"]
    request = AskRequest(question, top_k=top_k, max_tokens=max_tokens, use_cache=False, ignore_eos=True)
    ready = qa._asker._prepare(request)  # a bench reaching in: no public call returns the prompt alone
    return ready.plan.prompt, ready.params, ready.plan.prompt_tokens


def generate(qa: DocQA, prompt: str, params: SamplingParams, trace: Trace) -> None:
    assert qa.generator is not None
    trace.submitted = time.perf_counter()
    for event in qa.generator.submit(prompt, params):
        if event.kind == "text" or event.final:
            trace.stamps.append(time.perf_counter())
        if event.kind == "failed":
            raise RuntimeError(event.text)
        if event.final:
            trace.tokens = event.completion_tokens


def engine_alone(qa: DocQA, asked: list[str]) -> dict[str, Any]:
    warm = prepared(qa, asked[0] + " (warm-up)")
    generate(qa, warm[0], warm[1], Trace(0.0))
    ready = [prepared(qa, q) for q in asked]
    traces = [Trace(0.0) for _ in asked]
    work = [(qa, prompt, params, trace) for (prompt, params, _), trace in zip(ready, traces, strict=True)]
    threads = [threading.Thread(target=generate, args=args) for args in work]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    figures: dict[str, Any] = stream_figures("engine_alone_16", traces, time.perf_counter() - start)
    figures["engine_alone_16_prompt_tokens"] = sorted(n for _, _, n in ready)
    figures["engine_alone_16_tokens_each"] = sorted(t.tokens for t in traces)[len(traces) // 2]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_load_options(parser, "gpu_engine_same_prompts.json")
    args = parser.parse_args()
    with contracts_ingested(args) as (_, env, asked, out):
        os.environ.update(env)
        qa = DocQA.open(Settings(), embedder=False)
        try:
            out.update(engine_alone(qa, asked))
        finally:
            qa.close()  # the generator too: its GPU memory is free for the server's
        args.out.write_text(json.dumps(out, indent=1) + "\n")  # kept should the second half run out of time
        print(json.dumps(out), flush=True)
        with docqa_server(env) as (base, _):
            out.update(run_at_once(base, asked, "in_process"))
    out["in_process_over_engine_alone_wall"] = out["in_process_16_wall_s"] / out["engine_alone_16_wall_s"]
    text = json.dumps(out, indent=1)
    args.out.write_text(text + "\n")
    print(text, flush=True)


if __name__ == "__main__":
    main()
