"""What a sampler chain computes, whoever runs it (llama.cpp's chain, or the batched host sampler)."""

from __future__ import annotations

from dataclasses import dataclass

from docqa.core.sampling_params import SamplingParams

# llama.cpp's "draw a seed from the system's entropy" value; every reset then draws a new one.
RANDOM_SEED = 0xFFFFFFFF


@dataclass(frozen=True)
class ChainKey:
    """What a chain computes; two requests with equal keys can share a slot's chain."""

    temperature: float
    top_k: int
    top_p: float
    min_p: float
    seed: int  # RANDOM_SEED unless the request fixed one

    @classmethod
    def of(cls, params: SamplingParams) -> ChainKey:
        seed = params.seed if params.seed >= 0 else RANDOM_SEED
        if params.temperature <= 0:
            return cls(0.0, 0, 1.0, 0.0, 0)  # greedy: the other parameters change nothing
        return cls(params.temperature, params.top_k, params.top_p, params.min_p, seed)
