"""Smallest engine run on the device, step by step: python -X faulthandler -m bench.gpu_smoke MODEL"""

import sys
from dataclasses import replace
from pathlib import Path

import llama_cpp
from llama_cpp import _internals

from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.core.settings import LLMSettings
from docqa.engine.batching import BatchingGenerator

path = sys.argv[1]
mp = llama_cpp.llama_model_default_params()
print("step default params ngl", mp.n_gpu_layers, "split", mp.split_mode, flush=True)
mp.n_gpu_layers = 0x7FFFFFFF
model = _internals.LlamaModel(path_model=path, params=mp, verbose=True)
print("step model loaded", flush=True)
cp = llama_cpp.llama_context_default_params()
cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max, cp.kv_unified = 8192, 2048, 512, 4, True
cp.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
ctx = _internals.LlamaContext(model=model, params=cp, verbose=True)
print("step context made", flush=True)
ctx.close()
model.close()
print("step engine", flush=True)
engine = BatchingGenerator(Path(path), LLMSettings(n_ctx=4096, n_parallel=2, kv_cells=8192))
print("step engine loaded", engine.memory_report(), flush=True)
events = list(engine.submit("Hello there, " * 50, replace(NON_THINKING_SAMPLING, max_tokens=16, ignore_eos=True)))
print("step events", len(events), events[-1], flush=True)
engine.close()
