"""Where the scheduler's time goes, step by step: the figures that say whether the GPU or the host is the limit."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field


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
    launches: int = 0
    passes: int = 0  # llama.cpp's passes over the launched batches (step_layout.passes)
    fillers: int = 0  # filler tokens that kept generating rows in one pass (step_layout)
    # Per step, when asked for (a list): (when its tokens came back, generating rows, prompt tokens). Benchmarks
    # read where a load's time went from it (trace_summary); the engine never does.
    trace: list[tuple[float, int, int]] | None = None
    _launched: deque[tuple[int, int]] = field(default_factory=deque, repr=False)

    def record_launch(
        self,
        t_start: float,
        t_built: float,
        t_decoded: float,
        next_tokens_only: bool,
        rows: int = 0,
        prompt_tokens: int = 0,
    ) -> None:
        self.build_s += t_built - t_start
        self.decode_s += t_decoded - t_built
        if next_tokens_only:
            self.next_token_steps += 1
            self.next_token_decode_s += t_decoded - t_built
        if self.trace is not None:
            self._launched.append((rows, prompt_tokens))  # steps are waited for in the order they launch

    def record_layout(self, passes: int, fillers: int) -> None:
        self.launches += 1
        self.passes += passes
        self.fillers += fillers

    def record_wait(self, t_window: float, t_waiting: float, t_sampled: float, n_sampled: int) -> None:
        """A step's text window, its wait for the tokens and (up to now) their acceptance."""
        self.steps += 1
        self.tokens_sampled += n_sampled
        self.text_s += t_waiting - t_window
        self.sample_s += t_sampled - t_waiting
        self.accept_s += time.perf_counter() - t_sampled
        if self.trace is not None and self._launched:
            self.trace.append((t_sampled, *self._launched.popleft()))

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
            "passes_per_launch": self.passes / max(self.launches, 1),
            "fillers_per_launch": self.fillers / max(self.launches, 1),
        }


def trace_summary(trace: list[tuple[float, int, int]], started: float) -> dict[str, float]:
    """Where a traced load's time went, by the kind of step: prompt only, prompt with generating rows,
    generating rows only; each kind's steps, seconds (from the step before's end), mean rows and prompt
    tokens. `started`: when the load was submitted (the first step's start)."""
    out: dict[str, float] = {}
    previous = started
    for done, rows, prompt in trace:
        kind = "prompt_only" if rows == 0 else ("mixed" if prompt else "decode_only")
        out[f"{kind}_steps"] = out.get(f"{kind}_steps", 0) + 1
        out[f"{kind}_s"] = out.get(f"{kind}_s", 0.0) + done - previous
        out[f"{kind}_rows"] = out.get(f"{kind}_rows", 0) + rows
        out[f"{kind}_prompt_tokens"] = out.get(f"{kind}_prompt_tokens", 0) + prompt
        previous = done
    for kind in ("prompt_only", "mixed", "decode_only"):
        steps = out.get(f"{kind}_steps", 0)
        if steps:
            out[f"{kind}_ms_per_step"] = 1000 * out[f"{kind}_s"] / steps
            out[f"{kind}_rows"] /= steps
            out[f"{kind}_prompt_tokens"] /= steps
    return out
