"""Fitting the engine's KV cache into the GPU memory the model leaves free.

The defaults (8 sequences and 2 cached prompts of 16,384 tokens each) ask for 163,840 KV cells: 25 GiB
for Qwen3-14B at 160 KiB a cell, on top of its 9 GB of weights. An H200 holds that; a 24 GB RTX 4090
does not, and llama.cpp would only say that it failed to create a context. So once the model is on
the GPU, the engine asks ggml how much memory each GPU has left and, when the cache as configured
would not fit beside llama.cpp's compute buffer and a safety margin, gives each sequence fewer
cells (prompts are then built for the smaller context). Where that would leave a sequence too little
for a retrieved chunk and an answer, it runs fewer sequences instead: cached prompts first, down to
one, then parallel requests, then the last cached prompt. Only where even one sequence would not get
4,096 tokens, or the size was set explicitly, does it fail, with a message naming the settings.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from docqa.core.errors import ConfigError
from docqa.llama.native_libraries import library_beside_llama

_GPU_TYPES = (1, 2)  # enum ggml_backend_dev_type: GGML_BACKEND_DEVICE_TYPE_GPU, _IGPU
CELL_GRANULARITY = 256  # llama.cpp pads a sequence's cells to a multiple of 256
USEFUL_CELLS_PER_SEQUENCE = 8192  # a 4k-token chunk, part of another and an answer: run fewer sequences below
MIN_CELLS_PER_SEQUENCE = 4096  # below this not even one chunk and an answer fit: fail instead
SAFETY_MARGIN = 1 << 30  # per GPU: the CUDA context's own allocations, cuBLAS workspaces, fragmentation
SMALL_PASS = (2048, 1024)  # (n_batch, n_ubatch) where GPU memory is short, and on the CPU
LARGE_PASS = (4096, 2048)  # where the KV cache as asked fits beside this pass's compute buffer


@dataclass(frozen=True)
class KvPlan:
    """What the engine asks llama.cpp for: total KV cells, and the cells each sequence gets."""

    cells: int
    cells_per_sequence: int
    shrunk: bool
    n_parallel: int  # the sequences requests run in (fewer than asked where memory is short)
    n_cache: int  # the sequences cached prompts are kept in


def gpu_free_bytes(lib: Any, reserve_per_gpu: int = 0) -> int | None:
    """Free memory summed over the GPUs ggml sees, less the safety margin and `reserve_per_gpu` on each
    (with the layers split over several GPUs, each holds a compute buffer and a pool of its own); None
    when it sees none. lib: llama-cpp-python's llama_cpp package (the ggml libraries beside its llama
    library are the ones llama.cpp loaded)."""
    try:
        registry = library_beside_llama(lib, "ggml")
        base = library_beside_llama(lib, "ggml-base")
    except OSError:
        return None
    registry.ggml_backend_dev_count.restype = ctypes.c_size_t
    registry.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
    registry.ggml_backend_dev_get.restype = ctypes.c_void_p
    base.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
    base.ggml_backend_dev_type.restype = ctypes.c_int
    base.ggml_backend_dev_memory.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    base.ggml_backend_dev_memory.restype = None
    free_total, seen = 0, False
    for index in range(registry.ggml_backend_dev_count()):
        device = registry.ggml_backend_dev_get(index)
        if base.ggml_backend_dev_type(device) not in _GPU_TYPES:
            continue
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        base.ggml_backend_dev_memory(device, ctypes.byref(free), ctypes.byref(total))
        free_total += max(0, free.value - SAFETY_MARGIN - reserve_per_gpu)
        seen = True
    return free_total if seen else None


def compute_buffer_bytes(n_ubatch: int, n_vocab: int, n_embd: int, n_ff: int) -> int:
    """An upper estimate of the GPU memory a decode needs besides the weights and the KV cache:
    llama.cpp's compute buffer, reserved with the context for a full pass of n_ubatch tokens, and
    the CUDA backend's pool of temporaries, which grows later, during the first long prompts.
    Measured on an H200 for Qwen3-14B's shape (bench/gpu_memory_fit_check.py): compute buffer 317 /
    634 / 1,268 MiB at passes of 512 / 1,024 / 2,048 tokens, and the pool 0.70 / 1.31 / 2.52 GiB more
    under a full load; the 1 GiB margin alone did not cover the pool, and decoding aborted with a CUDA
    error. Both grow with the pass; the pool by about two rows of float32 logits a token."""
    return n_ubatch * 4 * (3 * n_vocab + 2 * n_ff + 4 * n_embd)


def plan_kv(
    *,
    cells_per_sequence: int,
    n_parallel: int,
    n_cache: int,
    shared: bool,
    bytes_per_cell: int,
    budget_bytes: int | None,
    explicit: bool,
) -> KvPlan:
    """The cells to ask for, and for how many sequences. shared: one pool of `cells_per_sequence` cells
    for all sequences (a unified cache); else each of the n_parallel + n_cache sequences gets its own.
    budget_bytes: what the cache may use (None: no GPU, no limit). explicit: the user set the size; it
    is never shrunk, only checked."""
    streams = 1 if shared else n_parallel + n_cache
    asked = cells_per_sequence * streams
    if budget_bytes is None or asked * bytes_per_cell <= budget_bytes:
        return KvPlan(asked, cells_per_sequence, False, n_parallel, n_cache)
    need = f"{asked * bytes_per_cell / 2**30:.1f} GiB"
    room = f"{max(budget_bytes, 0) / 2**30:.1f} GiB"
    if explicit:
        raise ConfigError(
            f"the KV cache of {asked} cells (DOCQA_LLM_KV_CELLS) needs {need}; the GPU has {room} left after the "
            "model: lower DOCQA_LLM_KV_CELLS, or unset it to let docqa fit the cache"
        )

    def fits(n_streams: int) -> int:
        return max(budget_bytes, 0) // bytes_per_cell // n_streams // CELL_GRANULARITY * CELL_GRANULARITY

    parallel, cache = n_parallel, n_cache
    if not shared:
        useful = min(cells_per_sequence, USEFUL_CELLS_PER_SEQUENCE)
        while fits(parallel + cache) < useful and parallel + cache > 1:
            # cached prompts go first, but one is kept (a follow-up's fast start) until one request is left
            if cache > 1 or (cache == 1 and parallel == 1):
                cache -= 1
            else:
                parallel -= 1
    per_sequence = min(fits(1 if shared else parallel + cache), cells_per_sequence)
    floor = min(cells_per_sequence, MIN_CELLS_PER_SEQUENCE)
    if per_sequence < floor:
        raise ConfigError(
            f"the KV cache for {n_parallel} sequences and {n_cache} cached prompts of {cells_per_sequence} tokens "
            f"needs {need}; the GPU has {room} left after the model, not even {floor} tokens for one sequence: "
            "use a smaller quantisation or a GPU with more memory, or lower DOCQA_LLM_N_UBATCH"
        )
    cells = per_sequence * (1 if shared else parallel + cache)
    return KvPlan(cells, per_sequence, True, parallel, cache)


def pass_shape(n_batch: int | None, n_ubatch: int | None, fits_whole: Callable[[int], bool]) -> tuple[int, int]:
    """(n_batch, n_ubatch): most tokens in one step, and in one llama.cpp pass. As set where either is set
    (the other from SMALL_PASS; a pass never larger than its step). Where neither is, LARGE_PASS if
    fits_whole(its n_ubatch) says the KV cache as asked fits beside that pass's compute buffer, else
    SMALL_PASS: larger passes read prompts faster on a GPU with memory to spare, and never cost a KV cell
    (docs/benchmarks/gpu-engine.md, "GPU: the whole path picks the pass shape")."""
    if n_batch is None and n_ubatch is None:
        return LARGE_PASS if fits_whole(LARGE_PASS[1]) else SMALL_PASS
    step = n_batch or SMALL_PASS[0]
    return step, min(n_ubatch or SMALL_PASS[1], step)
