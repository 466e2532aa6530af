"""The order a step serves sequences in: generating ones, then overdue prompts, then the shortest prompt."""

from __future__ import annotations

import numpy as np

from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.core.streams import GenerationStream
from docqa.engine.sequences import Request, RunningSequence
from docqa.engine.step_order import PREFILL_PATIENCE_S, step_order


def _seq(name: str, pending: int, admitted_at: float) -> RunningSequence:
    request = Request(prompt=name, params=NON_THINKING_SAMPLING, stream=GenerationStream())
    return RunningSequence(
        request=request,
        slot=0,
        prompt=np.zeros(pending, dtype=np.int32),
        pending=[0] * pending,
        n_past=0,
        reserved=0,
        max_tokens=1,
        admitted_at=admitted_at,
    )


def _names(order: list[RunningSequence]) -> list[str]:
    return [s.request.prompt for s in order]


def test_generating_sequences_first_then_the_shortest_prompt() -> None:
    active = [_seq("long", 9000, 0.0), _seq("gen-a", 1, 0.0), _seq("short", 700, 1.0), _seq("gen-b", 1, 2.0)]
    assert _names(step_order(active, now=5.0)) == ["gen-a", "gen-b", "short", "long"]


def test_a_prompt_past_its_patience_is_read_before_shorter_ones_in_admission_order() -> None:
    later = PREFILL_PATIENCE_S + 10.0
    active = [_seq("old-long", 9000, 0.0), _seq("old-mid", 5000, 1.0), _seq("new-short", 300, later - 1.0)]
    assert _names(step_order(active, now=later)) == ["old-long", "old-mid", "new-short"]
    assert _names(step_order(active, now=1.5)) == ["new-short", "old-mid", "old-long"]
