"""Where the scheduler's time goes, step by step: the figures that say whether the GPU or the host is the limit."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class StepTiming:
    steps: int = 0
    tokens_sampled: int = 0
    launched_ahead: int = 0  # steps started before the last step's text was made (BatchingGenerator._launch_ahead)
    build_s: float = 0.0  # filling the batch
    decode_s: float = 0.0  # llama_decode's call (it may return before the GPU is done)
    next_token_steps: int = 0  # steps holding only the next token of each sequence, no prompt slice
    next_token_decode_s: float = 0.0  # their llama_decode calls: llama.cpp's host work, on a GPU
    text_s: float = 0.0  # the last step's text and waking the streams, while this step decodes
    sample_s: float = 0.0  # the sampled tokens or logits, which waits for the GPU to finish
    accept_s: float = 0.0  # taking the tokens, and starting the next step when it is launched ahead

    def record_launch(self, t_start: float, t_built: float, t_decoded: float, next_tokens_only: bool) -> None:
        self.build_s += t_built - t_start
        self.decode_s += t_decoded - t_built
        if next_tokens_only:
            self.next_token_steps += 1
            self.next_token_decode_s += t_decoded - t_built

    def record_wait(self, t_window: float, t_waiting: float, t_sampled: float, n_sampled: int) -> None:
        """A step's text window, its wait for the tokens and (up to now) their acceptance."""
        self.steps += 1
        self.tokens_sampled += n_sampled
        self.text_s += t_waiting - t_window
        self.sample_s += t_sampled - t_waiting
        self.accept_s += time.perf_counter() - t_sampled

    def report(self) -> dict[str, float]:
        """Mean milliseconds per step for each part, and the share of steps launched ahead."""
        n = max(self.steps, 1)
        return {
            "steps": self.steps,
            "tokens_sampled": self.tokens_sampled,
            "launched_ahead_share": self.launched_ahead / n,
            "build_ms": 1000 * self.build_s / n,
            "decode_ms": 1000 * self.decode_s / n,
            "next_token_decode_ms": 1000 * self.next_token_decode_s / max(self.next_token_steps, 1),
            "text_ms": 1000 * self.text_s / n,
            "sample_ms": 1000 * self.sample_s / n,
            "accept_ms": 1000 * self.accept_s / n,
        }
