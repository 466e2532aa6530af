"""Where the scheduler's time goes, step by step: the figures that say whether the GPU or the host is the limit."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class StepTiming:
    steps: int = 0
    tokens_sampled: int = 0
    build_s: float = 0.0  # filling the batch
    decode_s: float = 0.0  # llama_decode's call (it may return before the GPU is done)
    sample_s: float = 0.0  # the sampled tokens or logits, which waits for the GPU to finish
    accept_s: float = 0.0  # detokenising, stop strings, handing text to the streams

    def record(self, t_start: float, t_built: float, t_decoded: float, t_sampled: float, n_sampled: int) -> None:
        now = time.perf_counter()
        self.steps += 1
        self.tokens_sampled += n_sampled
        self.build_s += t_built - t_start
        self.decode_s += t_decoded - t_built
        self.sample_s += t_sampled - t_decoded
        self.accept_s += now - t_sampled

    def report(self) -> dict[str, float]:
        """Mean milliseconds per step for each part."""
        n = max(self.steps, 1)
        return {
            "steps": self.steps,
            "tokens_sampled": self.tokens_sampled,
            "build_ms": 1000 * self.build_s / n,
            "decode_ms": 1000 * self.decode_s / n,
            "sample_ms": 1000 * self.sample_s / n,
            "accept_ms": 1000 * self.accept_s / n,
        }
