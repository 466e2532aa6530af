"""The baselines docqa's engine is measured against on the GPU, each in the same run as the engine:
llama.cpp's own continuous batching (`llama-server -np 16`) and llama-cpp-python's high-level `Llama`
answering the same requests one after another (what its server does)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

from bench.traces import Trace, stream_figures


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

    import llama_cpp

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
