"""A thin, typed layer over llama.cpp's low-level API for the batching engine.

One model, one context with a unified KV cache shared by up to `n_seq_max` sequences (so a cached
prompt prefix can be shared by copying sequence membership, not memory), one reusable batch.
Every method must be called from the engine's thread: llama.cpp contexts are not thread-safe.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from docqa.core.errors import ConfigError
from docqa.core.llm_settings import CPU_N_CTX
from docqa.core.settings import LLMSettings
from docqa.llama.memory_fit import KvPlan, compute_buffer_bytes, gpu_free_bytes, pass_shape, plan_kv
from docqa.llama.model_files import (
    context_failed,
    cpu_threads,
    engine_flash_attention,
    offloaded,
    unreadable_model,
    use_backend_sampling,
    weight_repacking_safe,
)
from docqa.llama.token_batch import TokenBatch

logger = logging.getLogger(__name__)
_llama_log = False  # llama.cpp's own log lines on stderr (DOCQA_LLAMA_LOG, through show_llama_log)


def show_llama_log(on: bool) -> None:
    """Whether models loaded from now on let llama.cpp write its log (the service sets it from the settings)."""
    global _llama_log
    _llama_log = on


def load_model(model_path: Path, n_gpu_layers: int) -> Any:
    """llama.cpp's model through llama-cpp-python's low-level wrapper (the engine's and the embedder's)."""
    import llama_cpp
    from llama_cpp import _internals, _logger

    # the high-level Llama sets llama.cpp's log level; the low-level API does not (DOCQA_LLAMA_LOG=1: all)
    _logger.set_verbose(_llama_log)
    model_params = llama_cpp.llama_model_default_params()
    # llama-cpp-python's convention: -1 means every layer (llama.cpp itself wants a large count)
    model_params.n_gpu_layers = 0x7FFFFFFF if n_gpu_layers < 0 else n_gpu_layers
    model_params.use_extra_bufts = weight_repacking_safe()
    # verbose=True skips llama-cpp-python's stdout/stderr descriptor swapping, which crashed the
    # first model load of a process on the GPU device; the log level above keeps llama.cpp quiet.
    try:
        return _internals.LlamaModel(path_model=str(model_path), params=model_params, verbose=True)
    except ValueError as exc:  # llama.cpp says no more than that it failed
        raise unreadable_model(model_path) from exc


def new_context(model: Any, params: Any, model_path: Path, settings_to_lower: str) -> Any:
    """A llama.cpp context for a loaded model; where llama.cpp cannot make one, the model is freed (the
    caller has nothing left to clean up) and a clear error names the settings that size the context."""
    from llama_cpp import _internals

    try:
        return _internals.LlamaContext(model=model, params=params, verbose=True)
    except Exception as exc:
        model.close()
        if isinstance(exc, ValueError):
            raise context_failed(model_path, int(params.n_ctx), settings_to_lower) from exc
        raise


def context_params(*, n_ctx: int, n_batch: int, n_ubatch: int, n_threads: int, flash_attn: bool | None) -> Any:
    """llama.cpp context parameters with what the engine's and the embedder's contexts share;
    flash_attn None leaves it to llama.cpp (on where the device has the kernel, as its own tools do)."""
    import llama_cpp

    params = llama_cpp.llama_context_default_params()
    params.n_ctx = n_ctx
    params.n_batch = n_batch
    params.n_ubatch = n_ubatch
    params.n_threads = params.n_threads_batch = n_threads
    params.flash_attn_type = {
        None: llama_cpp.LLAMA_FLASH_ATTN_TYPE_AUTO,
        True: llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED,
        False: llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED,
    }[flash_attn]
    params.no_perf = True
    return params


# bytes per 32 elements of the KV cache, by its type (ggml's q8_0 block: 32 int8 values and an f16 scale)
KV_ELEMENT_BYTES = {"f16": 64, "q8_0": 34}


def long_context(params: Any, kv_type: str, yarn: tuple[float, int] | None) -> None:
    """The KV cache's type and YaRN rope scaling on llama.cpp context parameters. Qwen3 reads 32,768 tokens
    natively and 131,072 with YaRN at factor 4 (its model card); a q8_0 cache halves what a long context
    costs (llama.cpp quantizes V only with flash attention, which the engine leaves on where it runs)."""
    for name, value in long_context_fields(kv_type, yarn).items():
        setattr(params, name, value)


def yarn_of(settings: LLMSettings) -> tuple[float, int] | None:
    """(YaRN's factor, the context the model was trained on) where the settings ask for YaRN, else None."""
    return (settings.yarn_factor, settings.yarn_orig_ctx) if settings.rope_scaling == "yarn" else None


def long_context_fields(kv_type: str, yarn: tuple[float, int] | None) -> dict[str, Any]:
    """`long_context`'s fields by their names in llama.cpp's context parameters, which are also the
    keywords of llama-cpp-python's `Llama` (the serial generator's)."""
    import llama_cpp

    fields: dict[str, Any] = {}
    if kv_type == "q8_0":
        fields["type_k"] = fields["type_v"] = llama_cpp.GGML_TYPE_Q8_0
    if yarn is not None:
        factor, trained = yarn
        fields["rope_scaling_type"] = llama_cpp.LLAMA_ROPE_SCALING_TYPE_YARN
        fields["rope_freq_scale"] = 1.0 / factor
        fields["yarn_orig_ctx"] = trained
    return fields


class LlamaContext:
    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int,
        n_batch: int | None,
        n_ubatch: int | None = None,
        n_seq_max: int,
        kv_unified: bool,
        n_gpu_layers: int,
        flash_attn: bool | None,
        n_threads: int,
        n_cache: int = 0,
        backend_sampling: bool = False,
        fit_to_gpu: bool = False,
        kv_explicit: bool = False,
        gpu_budget: Callable[[Any, int], int | None] = gpu_free_bytes,
        kv_type: str = "f16",
        yarn: tuple[float, int] | None = None,
    ) -> None:
        """n_ctx: KV cells in all. n_cache: how many of the n_seq_max sequences hold cached prompts.
        fit_to_gpu: fewer cells, or fewer sequences, where that many would not fit the GPU memory the
        model leaves (docqa.llama.memory_fit; the sequences kept: n_parallel and n_cache); kv_explicit:
        the user chose n_ctx, so never fewer (a clear error instead). gpu_budget(lib, reserve_per_gpu): what
        the GPUs have free for the KV cache once each keeps that much for decoding, None without one.
        n_batch, n_ubatch: None (both) lets memory_fit.pass_shape pick them by the GPU memory left.
        kv_type: the KV cache's element type (f16, or q8_0: half the memory). yarn: (factor, the context the
        model was trained on) to read contexts longer than that with YaRN rope scaling."""
        import llama_cpp

        self.lib: Any = llama_cpp
        self.kv_type = kv_type
        self.backend_sampling = backend_sampling
        self.model = load_model(model_path, n_gpu_layers)
        self.metadata: dict[str, str] = dict(self.model.metadata())
        self.n_vocab = int(self.model.n_vocab())
        self.kv_cells_asked = n_ctx
        self.n_parallel, self.n_cache = n_seq_max - n_cache, n_cache
        plan_for = partial(
            self._plan_kv, n_ctx, kv_unified, n_gpu_layers=n_gpu_layers, explicit=kv_explicit, gpu_budget=gpu_budget
        )
        try:
            n_batch, n_ubatch = pass_shape(n_batch, n_ubatch, lambda size: fit_to_gpu and _uncut(plan_for, size))
            plan = plan_for(n_ubatch=n_ubatch) if fit_to_gpu else None
        except Exception:
            self.model.close()
            raise
        if plan is not None:
            if plan.shrunk:
                self._log_cut(plan, n_ctx)
            n_ctx, self.n_parallel, self.n_cache = plan.cells, plan.n_parallel, plan.n_cache
            n_seq_max = plan.n_parallel + plan.n_cache
        self.n_ubatch = n_ubatch
        logger.info(
            "prompts read in steps of %d tokens, passes of %d (DOCQA_LLM_N_BATCH, _N_UBATCH)", n_batch, n_ubatch
        )
        params = context_params(
            n_ctx=n_ctx, n_batch=n_batch, n_ubatch=n_ubatch, n_threads=n_threads, flash_attn=flash_attn
        )
        params.n_seq_max = n_seq_max
        params.kv_unified = kv_unified
        long_context(params, kv_type, yarn)
        if backend_sampling:
            # the engine asks one output per sequence per batch; a backend sampler plans for this many
            params.n_outputs_max_per_seq = 1
        self.ctx = new_context(
            self.model, params, model_path, "DOCQA_LLM_N_CTX, DOCQA_LLM_N_PARALLEL or DOCQA_LLM_PREFIX_CACHE_SLOTS"
        )
        self.n_ctx = int(llama_cpp.llama_n_ctx(self.ctx.ctx))
        self.kv_unified = kv_unified
        # without a unified cache, llama.cpp gives every sequence an equal share of the cells
        self.n_ctx_seq = self.n_ctx if kv_unified else self.n_ctx // n_seq_max
        self.n_batch = n_batch
        self._memory = llama_cpp.llama_get_memory(self.ctx.ctx)
        self.batch = TokenBatch(n_batch)  # what the next decode() evaluates
        self._pieces: dict[int, bytes] = {}
        self._end_tokens: dict[int, bool] = {}
        # the sampled rows' addresses as plain integers (llama-cpp-python's functions return typed pointers)
        address_of = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)
        library = llama_cpp.llama_cpp._lib
        self._sampled_logits_address = address_of(("llama_get_sampled_logits_ith", library))
        self._sampled_candidates_address = address_of(("llama_get_sampled_candidates_ith", library))

    @classmethod
    def for_engine(cls, model_path: Path, settings: LLMSettings) -> LlamaContext:
        """The context the batching engine runs on: room for n_parallel sequences and the cached
        prompts, in KV cells of their own each (or one shared pool, kv_unified), fitted to the GPU."""
        n_seq_max = settings.n_parallel + settings.prefix_cache_slots
        n_ctx = sequence_context(settings)
        if settings.kv_unified:
            kv_cells = settings.kv_cells or n_ctx * min(settings.n_parallel, 4)
        else:
            kv_cells = settings.kv_cells or n_ctx * n_seq_max
        return cls(
            model_path,
            n_ctx=kv_cells,
            n_batch=settings.n_batch,
            n_ubatch=settings.n_ubatch,
            n_seq_max=n_seq_max,
            n_cache=settings.prefix_cache_slots,
            kv_unified=settings.kv_unified,
            n_gpu_layers=settings.n_gpu_layers,
            flash_attn=engine_flash_attention(settings.flash_attn, settings.n_gpu_layers, settings.kv_unified),
            n_threads=cpu_threads(settings.n_threads),
            backend_sampling=use_backend_sampling(settings.backend_sampling, settings.n_gpu_layers),
            fit_to_gpu=offloaded(settings.n_gpu_layers),
            kv_explicit=settings.kv_cells is not None,
            kv_type=settings.kv_cache_type,
            yarn=yarn_of(settings),
        )

    def _plan_kv(
        self,
        cells: int,
        shared: bool,
        n_ubatch: int,
        n_gpu_layers: int,
        explicit: bool,
        gpu_budget: Callable[[Any, int], int | None],
    ) -> KvPlan:
        """The KV cells (and sequences) to ask llama.cpp for beside the compute buffer of passes of n_ubatch: as
        configured, or fewer where the GPU has no room for them (memory_fit.plan_kv; the layers left on the CPU
        keep their KV cells in host memory)."""
        n_layer = max(self._hparam("block_count", 1), 1)
        on_gpu = n_layer if n_gpu_layers < 0 else min(n_gpu_layers, n_layer)
        n_embd, n_ff = self._hparam("embedding_length"), self._hparam("feed_forward_length")
        free = gpu_budget(self.lib, compute_buffer_bytes(n_ubatch, self.n_vocab, n_embd, n_ff))
        streams = self.n_parallel + self.n_cache
        return plan_kv(
            cells_per_sequence=cells if shared else cells // streams,
            n_parallel=self.n_parallel,
            n_cache=self.n_cache,
            shared=shared,
            bytes_per_cell=max(self.kv_bytes_per_token() * on_gpu // n_layer, 1),
            budget_bytes=free,
            explicit=explicit,
        )

    def _log_cut(self, plan: KvPlan, cells: int) -> None:
        fewer = ""
        if (plan.n_parallel, plan.n_cache) != (self.n_parallel, self.n_cache):
            fewer = (
                f"; {plan.n_parallel} parallel requests and {plan.n_cache} cached prompts, where "
                f"{self.n_parallel} and {self.n_cache} were asked (DOCQA_LLM_N_PARALLEL, "
                "DOCQA_LLM_PREFIX_CACHE_SLOTS)"
            )
        logger.warning(
            "KV cache cut to fit the GPU: %d tokens per sequence, %d cells (%.1f GiB), where %d were asked%s",
            plan.cells_per_sequence,
            plan.cells,
            plan.cells * self.kv_bytes_per_token() / 2**30,
            cells,
            fewer,
        )

    def close(self) -> None:
        self.ctx.close()
        self.model.close()

    # --- tokens --------------------------------------------------------------------------------

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        return list(self.model.tokenize(text.encode("utf-8"), add_bos=True, special=special))

    def piece(self, token: int) -> bytes:
        """The token's bytes. (llama-cpp-python's own token_to_piece returns its whole 32-byte buffer,
        NULs included, so we call llama.cpp directly and honour the length it returns.) Memoised:
        every streamed token asks."""
        if (known := self._pieces.get(token)) is not None:
            return known
        size = 64
        while True:
            buf = ctypes.create_string_buffer(size)
            n = int(self.lib.llama_token_to_piece(self.model.vocab, token, buf, size, 0, False))
            if n >= 0:
                self._pieces[token] = buf.raw[:n]
                return buf.raw[:n]
            size = -n

    def is_end_of_generation(self, token: int) -> bool:
        """Memoised too: a ctypes call per token lets another thread take the GIL in the step's way."""
        if (known := self._end_tokens.get(token)) is None:
            known = self._end_tokens[token] = bool(self.lib.llama_vocab_is_eog(self.model.vocab, token))
        return known

    # --- decoding ------------------------------------------------------------------------------

    def decode(self) -> int:
        """Evaluate `batch` and clear it; 0 on success, 1 when the KV cache has no room, <0 on error."""
        rc = int(self.lib.llama_decode(self.ctx.ctx, self.batch.struct))
        self.batch.clear()
        return rc

    def logits_ready(self, batch_index: int) -> None:
        """Make llama.cpp finish the step and put its outputs in batch order (done on first access)."""
        self.lib.llama_get_logits_ith(self.ctx.ctx, batch_index)

    def all_logits(self, n_outputs: int) -> np.ndarray:
        """This step's logits, one row per output in batch order: a view, valid until the next decode."""
        ptr = self.lib.llama_get_logits(self.ctx.ctx)
        return np.ctypeslib.as_array(ptr, shape=(n_outputs, self.n_vocab))

    def sampled_top_k(self, batch_index: int, float_ids: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(token IDs, logits) a top-k-only chain kept in the graph for this output. float_ids: the IDs
        are float32 (docqa.engine.block_top_k). No IDs at all: the chain left the whole row."""
        ctx = self.ctx.ctx
        n_values = int(self.lib.llama_get_sampled_logits_count_ith(ctx, batch_index))
        values = np.ctypeslib.as_array(self.lib.llama_get_sampled_logits_ith(ctx, batch_index), shape=(n_values,))
        n = int(self.lib.llama_get_sampled_candidates_count_ith(ctx, batch_index))
        if n == 0:
            return np.arange(n_values, dtype=np.int64), values.copy()
        ids = np.ctypeslib.as_array(self.lib.llama_get_sampled_candidates_ith(ctx, batch_index), shape=(n,))
        return (ids.view(np.float32) if float_ids else ids).astype(np.int64), values.copy()

    def sampled_block_top_k(self, batch_indices: list[int]) -> tuple[np.ndarray, np.ndarray] | None:
        """([rows, k] token IDs, [rows, k] logits) the block top-k kept for these outputs, read in one
        gather: with 64 rows, four ctypes calls and two small arrays per row cost as much as 2% of a
        decode step on an H200. None when the step's graph kept no candidates (see BlockTopK)."""
        ctx = self.ctx.ctx
        k = int(self.lib.llama_get_sampled_candidates_count_ith(ctx, batch_indices[0]))
        if k == 0:
            return None
        # every output's row sits at a fixed stride in llama.cpp's host buffers: read them as one array
        values = self._gather(self._sampled_logits_address, batch_indices, k)
        ids = self._gather(self._sampled_candidates_address, batch_indices, k)  # the IDs are float32 too
        if values is None or ids is None:
            return None
        return ids.astype(np.int64), values

    def _gather(self, address_of: Any, batch_indices: list[int], k: int) -> np.ndarray | None:
        """k float32 at each output's row; None unless every row is in the buffer (a row whose step
        part kept no candidates points elsewhere, or nowhere: the caller reads row by row instead)."""
        addresses = np.array([address_of(self.ctx.ctx, i) or 0 for i in batch_indices], dtype=np.int64)
        base = int(addresses.min())
        offsets = addresses - base
        if base == 0 or np.any(offsets % (self.n_vocab * 4)):
            return None
        whole = np.ctypeslib.as_array((ctypes.c_float * (int(offsets.max()) // 4 + k)).from_address(base))
        return whole[(offsets // 4)[:, None] + np.arange(k)[None, :]]

    def logits(self, batch_index: int) -> np.ndarray:
        ptr = self.lib.llama_get_logits_ith(self.ctx.ctx, batch_index)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()

    # --- KV cache ------------------------------------------------------------------------------

    def seq_remove(self, seq_id: int, start: int = 0, end: int = -1) -> bool:
        return bool(self.lib.llama_memory_seq_rm(self._memory, seq_id, start, end))

    def seq_copy(self, src: int, dst: int, end: int) -> None:
        """Make dst hold src's positions [0, end). In a unified cache the cells are shared; across
        per-sequence streams llama.cpp copies whole streams only, so copy all, then trim."""
        if self.kv_unified:
            self.lib.llama_memory_seq_cp(self._memory, src, dst, 0, end)
            return
        self.lib.llama_memory_seq_rm(self._memory, dst, -1, -1)
        self.lib.llama_memory_seq_cp(self._memory, src, dst, -1, -1)
        self.lib.llama_memory_seq_rm(self._memory, dst, end, -1)

    def seq_max_pos(self, seq_id: int) -> int:
        return int(self.lib.llama_memory_seq_pos_max(self._memory, seq_id))

    def clear(self) -> None:
        self.lib.llama_memory_clear(self._memory, True)

    # --- sampling ------------------------------------------------------------------------------

    def attach_sampler(self, seq_id: int, chain: Any) -> bool:
        """Run this sampler chain inside the decode graph for seq_id's outputs (None detaches it);
        False when llama.cpp cannot run the chain there."""
        return bool(self.lib.llama_set_sampler(self.ctx.ctx, seq_id, chain))

    def kv_bytes_per_token(self) -> int:
        """K and V for every layer at the cache's type (f16: 2 bytes an element; q8_0: 34 bytes a block of
        32): what one KV cell costs in memory."""
        n_layer = self._hparam("block_count")
        n_kv = self._hparam("attention.head_count_kv", self._hparam("attention.head_count"))
        n_head = self._hparam("attention.head_count", 1) or 1
        k_len = self._hparam("attention.key_length", self._hparam("embedding_length") // n_head)
        v_len = self._hparam("attention.value_length", k_len)
        return n_layer * n_kv * (k_len + v_len) * KV_ELEMENT_BYTES[self.kv_type] // 32

    def _hparam(self, name: str, default: int = 0) -> int:
        """One of the model's hyperparameters from its GGUF metadata (`<architecture>.<name>`)."""
        arch = self.metadata.get("general.architecture", "")
        return int(self.metadata.get(f"{arch}.{name}", default))


def _uncut(plan_for: Callable[..., KvPlan], n_ubatch: int) -> bool:
    """Whether the KV cache as asked fits, uncut, beside the compute buffer of passes of n_ubatch."""
    try:
        return not plan_for(n_ubatch=n_ubatch).shrunk
    except ConfigError:
        return False


def sequence_context(settings: LLMSettings) -> int:
    """Each sequence's context: n_ctx, or on a CPU where n_ctx was left at its default, CPU_N_CTX (see the
    setting)."""
    if offloaded(settings.n_gpu_layers) or "n_ctx" in settings.model_fields_set:
        return settings.n_ctx
    return min(settings.n_ctx, CPU_N_CTX)
