"""The long-context settings on a real llama.cpp context (the demo model, on the CPU): a q8_0 KV cache and
YaRN rope scaling reach llama.cpp's context, the cache's size follows its type, and both engines (batching and
serial) answer on it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from docqa.core.errors import ConfigError
from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.core.settings import LLMSettings
from docqa.engine.batching import BatchingGenerator
from docqa.llama.context import KV_ELEMENT_BYTES, LlamaContext
from docqa.llama.serial_generator import LlamaGenerator

pytestmark = pytest.mark.slow


def test_a_q8_0_cache_costs_34_bytes_where_f16_costs_64(demo_model: Path) -> None:
    sizes = {}
    for kv in ("f16", "q8_0"):
        settings = LLMSettings(n_ctx=1024, n_parallel=1, prefix_cache_slots=0, kv_cache_type=kv, flash_attn=True)
        context = LlamaContext.for_engine(demo_model, settings)
        try:
            sizes[kv] = context.kv_bytes_per_token()
            assert context.kv_type == kv
        finally:
            context.close()
    assert sizes["q8_0"] * KV_ELEMENT_BYTES["f16"] == sizes["f16"] * KV_ELEMENT_BYTES["q8_0"]


def test_the_engine_answers_with_yarn_and_a_q8_0_cache(demo_model: Path) -> None:
    settings = LLMSettings(
        n_ctx=2048, n_parallel=2, prefix_cache_slots=0, kv_cache_type="q8_0", rope_scaling="yarn", flash_attn=True
    )
    engine = BatchingGenerator(demo_model, settings)
    try:
        params = replace(NON_THINKING_SAMPLING, temperature=0.0, max_tokens=8)
        events = list(engine.submit("The capital of France is", params))
        assert events[-1].kind == "finished" and events[-1].completion_tokens >= 1
        assert "".join(e.text for e in events if e.kind == "text").strip()
    finally:
        engine.close()


def test_the_serial_engine_takes_yarn_and_a_q8_0_cache_too(demo_model: Path) -> None:
    import llama_cpp

    settings = LLMSettings(engine="serial", n_ctx=2048, kv_cache_type="q8_0", rope_scaling="yarn", yarn_factor=4.0)
    generator = LlamaGenerator(demo_model, settings)
    try:
        params = generator._llm.context_params
        assert params.type_k == params.type_v == llama_cpp.GGML_TYPE_Q8_0
        assert params.rope_scaling_type == llama_cpp.LLAMA_ROPE_SCALING_TYPE_YARN and params.rope_freq_scale == 0.25
        events = list(generator.submit("The capital of France is", replace(NON_THINKING_SAMPLING, max_tokens=4)))
        assert events[-1].kind == "finished" and events[-1].completion_tokens >= 1
    finally:
        generator.close()


def test_a_q8_0_cache_with_flash_attention_turned_off_is_a_clear_error(demo_model: Path) -> None:
    settings = LLMSettings(engine="serial", n_ctx=1024, kv_cache_type="q8_0", flash_attn=False)
    with pytest.raises(ConfigError, match="q8_0 needs flash attention"):
        LlamaGenerator(demo_model, settings)
