"""What the batching scheduler keeps about each request, waiting and running."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from docqa.core.sampling_params import THINKING_CUTOFF, SamplingParams
from docqa.core.streams import GenerationStream
from docqa.llama.output_text import OutputText

__all__ = ["THINKING_CUTOFF", "RunningSequence"]


@dataclass
class Request:
    """A request waiting for a slot."""

    prompt: str
    params: SamplingParams
    stream: GenerationStream
    tokens: np.ndarray | None = None  # the prompt's tokens, once the scheduler has looked at it


@dataclass
class RunningSequence:
    """A request the scheduler is running: its slot, its KV position and what it has produced."""

    request: Request
    slot: int
    prompt: np.ndarray
    pending: list[int]  # tokens still to evaluate: the prompt's rest, then each sampled token
    n_past: int  # position of the next token to evaluate
    reserved: int  # KV cells held back for this sequence
    max_tokens: int
    produced: int = 0
    prefilled: bool = False
    thinking_closed: bool = False
    recent_text: str = ""  # the last few characters, to notice a </think> spelled in several tokens
    output: OutputText = field(default_factory=lambda: OutputText(()))
    admitted_at: float = field(default_factory=time.monotonic)  # when it got its slot (step_order's patience)
    stop_due: bool = False  # its text reached a stop string after its next token was already on its way
    finished: bool = False

    @property
    def budget_open(self) -> bool:
        """A thinking budget applies and the reasoning is still open: each token's text must be seen
        before the next step is planned (the cap may add Qwen's closing sentence to its input)."""
        return self.request.params.thinking_budget is not None and not self.thinking_closed
