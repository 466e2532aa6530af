"""The engine's KV-cache fit (docqa/engine/memory_fit.py) on a real GPU made to look like a smaller card.

On the H200 a ballast allocation takes all but `--card-gib` of the free memory (by default what an
RTX 4090 leaves free: 23.5 GiB), in this process's own CUDA context, so llama.cpp sees what it would
see on that card. Then, with docqa's default settings:
  1. the engine is built: its plan (cells asked, cells given, tokens per sequence) is recorded;
  2. every parallel sequence (as many as the fit kept) runs at once with a prompt that fills its context,
     while a thread records the least free GPU memory: all must finish, none fail;
  3. an explicit DOCQA_LLM_KV_CELLS too large for the card must fail with docqa's clear error.
Writes the figures as JSON and prints them.

usage: python -m bench.gpu_memory_fit_check --model q14.gguf [--card-gib 23.5] [--out fit.json]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import threading
import time
from dataclasses import replace
from pathlib import Path

import llama_cpp  # noqa: F401  (before numpy, as in gpu_engine_bench)

from bench.gpu_engine_bench import make_prompt, run_requests
from docqa.core.errors import ConfigError
from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.core.settings import Settings
from docqa.engine.batching import BatchingGenerator

GIB = 2**30


class CudaDriver:
    """The few CUDA driver calls the ballast needs, on the device's primary context (the one the
    CUDA runtime, and so llama.cpp, uses too)."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")
        self._check(self.lib.cuInit(0), "cuInit")
        device = ctypes.c_int()
        self._check(self.lib.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
        context = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
        self._check(self.lib.cuCtxSetCurrent(context), "cuCtxSetCurrent")
        self.context = context

    @staticmethod
    def _check(rc: int, what: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{what} failed with CUDA error {rc}")

    def free_bytes(self) -> int:
        self._check(self.lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")  # per calling thread
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self.lib.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
        return free.value

    def allocate(self, n_bytes: int) -> None:
        pointer = ctypes.c_uint64()
        self._check(self.lib.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(n_bytes)), "cuMemAlloc")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--card-gib", type=float, default=23.5, help="GPU memory left free, as on the card emulated")
    ap.add_argument("--answer-tokens", type=int, default=64)
    ap.add_argument("--out", type=Path, default=Path("memory_fit.json"))
    args = ap.parse_args()
    out: dict[str, float | str] = {"card_gib": args.card_gib}

    cuda = CudaDriver()
    free = cuda.free_bytes()
    cuda.allocate(free - int(args.card_gib * GIB))
    out["free_gib_after_ballast"] = cuda.free_bytes() / GIB

    settings = Settings().llm  # the defaults (or DOCQA_LLM_*): all layers on the GPU, 8 sequences, 2 cached
    t0 = time.perf_counter()
    engine = BatchingGenerator(args.model, settings)
    out["engine_load_s"] = time.perf_counter() - t0
    out.update({f"engine_{key}": value for key, value in engine.memory_report().items()})
    out["free_gib_after_load"] = cuda.free_bytes() / GIB

    lowest = [cuda.free_bytes()]
    running = True

    def watch() -> None:
        while running:
            lowest[0] = min(lowest[0], cuda.free_bytes())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    context = engine.info.n_ctx
    prompts = [make_prompt(engine, context - args.answer_tokens - 16, 500 + i) for i in range(engine.llama.n_parallel)]
    params = replace(NON_THINKING_SAMPLING, max_tokens=args.answer_tokens, ignore_eos=True)
    t0 = time.perf_counter()
    failures = 0
    try:
        traces, wall = run_requests(engine, prompts, params)
    except RuntimeError as exc:  # a request failed: its message says why
        failures, wall, traces = 1, time.perf_counter() - t0, []
        out["failure"] = str(exc)
    running = False
    watcher.join()
    out["full_load_prompt_tokens_each"] = engine.count_tokens(prompts[0])
    out["full_load_requests"] = len(prompts)
    out["full_load_finished"] = sum(1 for t in traces if t.tokens == args.answer_tokens)
    out["full_load_failures"] = failures
    out["full_load_wall_s"] = wall
    out["lowest_free_gib_under_load"] = lowest[0] / GIB
    engine.close()

    too_many = engine.llama.kv_cells_asked * 4
    try:
        BatchingGenerator(args.model, settings.model_copy(update={"kv_cells": too_many})).close()
        out["explicit_too_large"] = "no error (WRONG)"
    except ConfigError as exc:
        out["explicit_too_large"] = str(exc)
    args.out.write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
