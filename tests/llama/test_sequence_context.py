"""Each sequence's context on a CPU: the default window is cut to what a CPU prompt can use (pure logic: the GPU's
presence is set by the test)."""

from __future__ import annotations

import pytest

from docqa.core.llm_settings import CPU_N_CTX, LLMSettings
from docqa.core.settings import Settings
from docqa.llama import context


@pytest.mark.parametrize("gpu", [False, True])
def test_the_default_window_is_cut_on_a_cpu_only(monkeypatch: pytest.MonkeyPatch, gpu: bool) -> None:
    monkeypatch.setattr(context, "offloaded", lambda n_gpu_layers: gpu)
    assert context.sequence_context(LLMSettings()) == (16384 if gpu else CPU_N_CTX)


def test_a_window_the_user_sets_is_kept_on_a_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(context, "offloaded", lambda n_gpu_layers: False)
    assert context.sequence_context(LLMSettings(n_ctx=16384)) == 16384
    monkeypatch.setenv("DOCQA_LLM_N_CTX", "32768")
    assert context.sequence_context(Settings().llm) == 32768
    monkeypatch.setenv("DOCQA_LLM_N_CTX", "4096")
    assert context.sequence_context(Settings().llm) == 4096
