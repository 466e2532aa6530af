"""Small batching engines and prompts shared by the engine and sampling tests."""

from __future__ import annotations

from pathlib import Path

from docqa.core.sampling_params import SamplingParams
from docqa.core.settings import LLMSettings
from docqa.engine.batching import BatchingGenerator

PROMPTS = [
    "The three primary colours are",
    "In a services agreement, the governing law clause says that",
    "设备质保期为验收合格之日起",
    "def fibonacci(n):\n    ",
    "The quick brown fox jumps over the lazy dog. The dog then",
    "Revenue for 2025 was EUR 184.6 million, up 23 percent from",
]


def four_sequences(model: Path, **overrides: object) -> BatchingGenerator:
    """A small engine for sampling tests: four sequences, no prefix cache."""
    settings = LLMSettings(n_ctx=1024, n_parallel=4, n_batch=256, prefix_cache_slots=0, **overrides)  # type: ignore[arg-type]
    return BatchingGenerator(model, settings)


def run_together(eng: BatchingGenerator, prompts: list[str], params: SamplingParams) -> list[str]:
    """Submit all prompts while the engine loop is held, so they are admitted in the same step
    (the same batches, hence the same logits, in every engine given the same prompts)."""
    with eng._step_lock:
        streams = [eng.submit(p, params) for p in prompts]
    return ["".join(e.text for e in s if e.kind == "text") for s in streams]
