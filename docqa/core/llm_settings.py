"""The generator's settings (`DOCQA_LLM_*`): the answer model, its context and batching, sampling
defaults, and a remote OpenAI-compatible endpoint in its place. Part of docqa.core.settings's one
settings object, in a module of its own for its size."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import JsonDict

PromptFormat = Literal["auto", "qwen3", "chatml", "gemma", "plain"]
PROMPT_FORMATS = frozenset({"qwen3", "chatml", "gemma", "plain"})  # what "auto" resolves to


# Defaults for a model running on the CPU (measured on the 2-core VM with the demo model, docs/benchmarks.md
# "CPU defaults"): the prompt is read at ~370-450 tokens/s and answers come at ~34 tokens/s. With 4,096
# tokens of document text a long-filing ask took 10.6 s (median of 4) against 35.6 s with three whole
# 4k-token chunks (12,900 prompt tokens), and a 512-token answer ends within another 15 s; the prompt still
# holds an evidence page for 0.75 of FinanceBench questions in their own filing (0.84 whole, 0.69 at 3,072).
CPU_PROMPT_BUDGET = 4096
CPU_MAX_TOKENS = 512
GPU_MAX_TOKENS = 1024
MIN_PROMPT_BUDGET = 512


# Marks a tuning switch: settled by measurement, kept to measure again, listed apart in docs/settings.md; it may
# go away in a later version.
EXPERIMENTAL: JsonDict = {"experimental": True}
# Marks what a person sets to run docqa (models, where data lives, the context, keys, OCR, the scale of a reading):
# docs/settings.md's first tables, at most ~30 (tests/core/test_settings_tiers.py counts them). Every other setting
# is advanced: a resource limit or a measured default that a deployment rarely changes.
PUBLIC: JsonDict = {"public": True}


class SettingsGroup(BaseModel):
    """A group of settings (DOCQA_<GROUP>_<FIELD>): a field it does not have is refused, naming the closest one
    (a misspelled DOCQA_LLM_MAX_TOKEN was ignored without a word)."""

    model_config = ConfigDict(extra="forbid")


CPU_N_CTX = 8192  # a sequence's context on a CPU where n_ctx is left at its default


class LLMSettings(SettingsGroup):
    model: Path | None = Field(
        default=None,
        description="Path to the generator GGUF (e.g. Qwen3-14B-Q4_K_M.gguf). Unset: the offline demo model. With "
        "an endpoint, only its vocabulary is read (no weights), to count the prompt's tokens.",
        json_schema_extra=PUBLIC,
    )
    n_ctx: int = Field(
        default=16384,
        ge=512,
        description="Generator context window in tokens (prompt + answer). Left at its default on a CPU, each sequence "
        "gets 8,192: a CPU prompt holds 4,096 tokens of document text, and the rest of the window only held KV cache "
        "memory (docs/benchmarks/cpu-serving.md).",
        json_schema_extra=PUBLIC,
    )
    kv_cache_type: Literal["f16", "q8_0"] = Field(
        default="f16",
        description="The KV cache's element type: q8_0 halves its memory, so that a long context (a whole document, "
        "docs/usage.md) fits a smaller card; llama.cpp quantizes its V half only with flash attention.",
        json_schema_extra=PUBLIC,
    )
    rope_scaling: Literal["none", "yarn"] = Field(
        default="none",
        description="yarn: read contexts past the model's trained length with YaRN rope scaling (Qwen3: 32,768 "
        "tokens natively, 131,072 with YaRN factor 4, per its model card); set n_ctx to the length wanted.",
        json_schema_extra=PUBLIC,
    )
    yarn_factor: float = Field(default=4.0, gt=1, description="YaRN's scaling factor (rope_scaling=yarn).")
    yarn_orig_ctx: int = Field(
        default=32768, ge=512, description="The context the model was trained on, that YaRN stretches (Qwen3: 32,768)."
    )
    n_gpu_layers: int = Field(
        default=-1, description="Layers offloaded to the GPU; -1 offloads every layer.", json_schema_extra=PUBLIC
    )
    flash_attn: bool | None = Field(
        default=None,
        description="Flash attention for the generator; unset: llama.cpp's own choice in the batching engine (on "
        "wherever the device has the kernel, CPU included), except a CPU with kv_unified (its rounding there breaks "
        "batch equivalence); the one-at-a-time fallback turns it on with a GPU or a q8_0 KV cache only.",
    )
    n_threads: int | None = Field(default=None, description="CPU threads for llama.cpp; unset uses every core.")
    max_tokens: int | None = Field(
        default=None,
        ge=1,
        description=f"Default cap on generated tokens (reasoning + answer); unset: {GPU_MAX_TOKENS:,} with the model "
        f"on a GPU or behind an endpoint, {CPU_MAX_TOKENS} on a CPU.",
        json_schema_extra=PUBLIC,
    )
    prompt_budget: int | None = Field(
        default=None,
        ge=MIN_PROMPT_BUDGET,
        description="Most tokens of document text (and its sources' tags) in one prompt: sources that are longer keep "
        "their best paragraphs for the question. Unset: what n_ctx leaves on a GPU or behind an endpoint, 4,096 on a "
        "CPU, where reading the prompt is the wait.",
    )
    prompt_format: PromptFormat = Field(
        default="auto",
        description="Prompt template: auto picks qwen3/chatml/gemma from the GGUF, else a plain completion prompt.",
    )
    seed: int = Field(default=-1, description="Sampling seed; -1 draws a random one per request.")
    endpoint: str | None = Field(
        default=None,
        description="Base URL of an OpenAI-compatible server that generates instead of in-process llama.cpp "
        "(vLLM, SGLang, llama.cpp's server, llama-cpp-python's, a docqa GPU node), e.g. http://gpu:8000/v1. "
        "docqa renders the prompt itself and sends it to /completions, so templates, stop strings and token "
        "counts match the in-process engine. Unset: in-process llama.cpp.",
        json_schema_extra=PUBLIC,
    )
    endpoint_model: str | None = Field(
        default=None,
        description="The model name the endpoint serves; unset: the first of its /models.",
        json_schema_extra=PUBLIC,
    )
    endpoint_api: Literal["completions", "chat"] = Field(
        default="completions",
        description="completions: docqa's rendered prompt to /completions (the same template and tokens as "
        "in-process); chat: for servers with only /chat/completions, the prompt's turns as messages, Qwen3's "
        "thinking switch as chat_template_kwargs.enable_thinking, reasoning read from reasoning_content or "
        "reasoning (or inline <think>); there the thinking budget is left to the server.",
    )
    endpoint_api_key: str | None = Field(
        default=None, description="Bearer token for the endpoint, if it wants one.", json_schema_extra=PUBLIC
    )
    endpoint_timeout_s: float = Field(
        default=180.0,
        gt=0,
        description="Longest wait for the endpoint to start answering or send the next token (connecting: at most 10 "
        "s); past it the ask fails with a 504 naming the endpoint. Sized for a busy CPU node reading a long prompt; a "
        "docqa node says each prompt slice's progress, which resets the wait.",
    )
    endpoint_status_wait_s: float = Field(
        default=1.0,
        ge=0,
        description="Longest wait for the endpoint's response status before an ask's stream opens with its "
        "citations: a refusal (429, 503) or failure within it is docqa's own HTTP status, one after it ends the "
        "stream with an error event. vLLM and docqa nodes answer it at once; llama.cpp's server answers it when it "
        "starts on the prompt, which under a burst is after the prompts ahead of it.",
    )
    endpoint_max_in_flight: int = Field(
        default=32,
        ge=1,
        description="Requests this process keeps open on the endpoint at once; beyond them docqa answers 'busy' "
        "(HTTP 429) itself (vLLM's own queue has no bound).",
    )
    max_queue: int = Field(
        default=32, ge=1, description="Requests allowed to wait for the generator before new ones get 'busy'."
    )
    engine: Literal["batching", "serial"] = Field(
        default="batching",
        description="batching: concurrent requests share each llama.cpp decode step; serial: one at a time.",
        json_schema_extra=PUBLIC,
    )
    n_parallel: int = Field(
        default=8, ge=1, le=128, description="Sequences the batching engine runs at once.", json_schema_extra=PUBLIC
    )
    n_batch: int | None = Field(
        default=None,
        ge=32,
        description="Most tokens in one decode step (generating tokens plus prompt slices). Unset, with n_ubatch "
        "unset too: 4096 where the GPU holds the KV cache as asked beside the larger pass, else 2048.",
    )
    n_ubatch: int | None = Field(
        default=None,
        ge=32,
        description="Most tokens llama.cpp computes in one pass; a larger step is split into passes of this many. "
        "Capped at n_batch. Larger passes read long prompts faster on a GPU, for more GPU memory besides the KV cache "
        "(llama.cpp's compute buffer grows with them). Unset, with n_batch unset too: 2048 where the GPU holds the "
        "KV cache as asked beside it, else 1024.",
    )
    pass_fillers: bool = Field(
        default=True,
        description="With a KV stream per sequence, lay each step out by slot and give a slot left out between two "
        "generating ones a one-token filler, so that llama.cpp reads the step's generating rows in one pass over the "
        "weights instead of one per run of consecutive slots (docqa.engine.step_layout); false: by slot, no fillers.",
        json_schema_extra=EXPERIMENTAL,
    )
    prompt_steps_per_decode: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="While prompts are read, the generating sequences take their next token in one step of this many "
        "(1: every step). llama.cpp evaluates those rows in a pass of their own: fewer such steps read prompts "
        "faster, while the streams already answering wait longer between tokens. Unset: 4 with every layer on a GPU, "
        "1 on a CPU (a prompt step there takes seconds).",
        json_schema_extra=EXPERIMENTAL,
    )
    prompt_step_ends_with_prompt: bool = Field(
        default=True,
        description="A step that reads the rest of a prompt starts no prompt it cannot finish, so that the finished "
        "prompt's first token is drawn without waiting for part of another (docqa.engine.scheduler.StepPlanner); "
        "false: every prompt step filled to n_batch.",
        json_schema_extra=EXPERIMENTAL,
    )
    kv_cells: int | None = Field(
        default=None,
        ge=512,
        description="KV cache size in tokens for all sequences and cached prefixes; unset: n_ctx for each "
        "sequence and cache slot (kv_unified off), or n_ctx x min(n_parallel, 4) (kv_unified on), cut to "
        "what the GPU has free after the model (and fewer sequences where each would get under 8,192 tokens: "
        "cached prefixes first, down to one, then parallel requests). Set, it is never cut: a clear error "
        "where it does not fit.",
    )
    prefix_cache_slots: int = Field(
        default=2, ge=0, description="Recent prompts kept in the KV cache for prefix reuse."
    )
    kv_unified: bool = Field(
        default=False,
        description="One KV pool for all sequences (cheap prefix sharing, but every sequence attends over the "
        "whole pool); off: each sequence has its own n_ctx cells, as llama-batched-bench runs.",
        json_schema_extra=EXPERIMENTAL,
    )
    prefix_cache_tokens: int | None = Field(
        default=None,
        ge=0,
        description="KV cells cached prefixes may hold; unset: a quarter of kv_cells.",
        json_schema_extra=EXPERIMENTAL,
    )
    backend_sampling: bool | None = Field(
        default=None,
        description="Run each request's sampler chain (top-k, top-p, temperature, draw) inside llama.cpp's "
        "decode graph, so only the chosen token leaves the GPU; unset: on when layers are offloaded to a GPU.",
        json_schema_extra=EXPERIMENTAL,
    )
    batched_sampling_from: int | None = Field(
        default=None,
        ge=0,
        description="Once this many sequences generate at once, llama.cpp's graph keeps only each row's top-k and the "
        "host draws all rows in one vectorised pass (without backend sampling, from the full logits) instead of one "
        "whole sampler chain each; back below half of it (from 2: back when one is left); 0: never; unset: 16 when "
        "layers are offloaded to a GPU, 2 on the CPU.",
        json_schema_extra=EXPERIMENTAL,
    )
    block_top_k: bool = Field(
        default=True,
        description="With sampling in llama.cpp's graph (backend_sampling), compute every row's top-k once for all "
        "rows from block maxima (a few operations in all), both where the graph keeps the top-k for the host "
        "(batched_sampling_from) and where a whole sampler chain runs in it; false: llama.cpp's own top-k, one per "
        "sequence.",
        json_schema_extra=EXPERIMENTAL,
    )
    block_top_k_short_sorts: bool = Field(
        default=True,
        description="The block top-k through two levels of blocks, so that none of its sorts is longer than 1,024 "
        "(ggml's CUDA backend sorts such a row in one kernel, a longer one with a multi-kernel radix sort); false: "
        "one level (Qwen: an argsort of 1,187 block maxima and one of 2,560 candidates).",
        json_schema_extra=EXPERIMENTAL,
    )
    thinking_budget: int | None = Field(
        default=None,
        ge=1,
        description="Cap on reasoning tokens in thinking mode; at the cap the reasoning is closed "
        "and the model answers.",
        json_schema_extra=PUBLIC,
    )
