"""How one answer is sampled: docqa's sampling parameters, apart from any generator that honours them
(the batching engine, the serial llama.cpp generator, a remote OpenAI-compatible server)."""

from __future__ import annotations

from dataclasses import dataclass

# Qwen's documented way to end reasoning early: a closing sentence, then </think>. The batching engine feeds
# it at the thinking budget; the endpoint generator sends it as the start of a continuation request.
THINKING_CUTOFF = (
    "\n\nConsidering the limited time by the user, I have to give the solution based on the thinking directly now."
    "\n</think>\n\n"
)


@dataclass(frozen=True)
class SamplingParams:
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    max_tokens: int
    seed: int = -1
    stop: tuple[str, ...] = ()
    thinking_budget: int | None = None  # reasoning tokens before the engine closes </think> itself
    ignore_eos: bool = False  # generate max_tokens whatever the model says (benchmarks)


# Qwen3's recommended sampling (model card): greedy decoding is discouraged in thinking mode.
THINKING_SAMPLING = SamplingParams(temperature=0.6, top_p=0.95, top_k=20, min_p=0.0, max_tokens=1024)
NON_THINKING_SAMPLING = SamplingParams(temperature=0.7, top_p=0.8, top_k=20, min_p=0.0, max_tokens=1024)
