"""Which sequences a step serves first: every generating sequence (one token each), then slices of the
prompts still being read, the prompt with the fewest tokens left first.

Reading the shortest remaining prompt first is what minimises the mean time to first token of prompts read
together (any other order makes the short ones wait for a long one and the long one gains nothing: its first
token comes after all of them either way). It also makes that time independent of the order in which asks
that come together happen to arrive, which jitters by milliseconds through HTTP and a generation node: first
come, first read, the median first token of the same 16 asks depended on which of them won those races.
"""

from __future__ import annotations

import time

from docqa.engine.sequences import RunningSequence

# A prompt admitted this long ago is read next whatever its length, in admission order, so that a steady
# stream of short asks cannot hold a long one back for ever. Above the ~30 s that 16 RAG prompts of 6-12k
# tokens take to read together on an H200 (the whole-path bench): a burst is ordered by length throughout.
PREFILL_PATIENCE_S = 45.0


def step_order(active: list[RunningSequence], now: float | None = None) -> list[RunningSequence]:
    """The sequences in the order a step fills its batch: generating ones (one pending token) first in
    admission order, then prompts past their patience in admission order, then the rest shortest first."""
    now = time.monotonic() if now is None else now

    def rank(seq: RunningSequence) -> tuple[int, float]:
        if len(seq.pending) <= 1:
            return (0, 0.0)
        if now - seq.admitted_at >= PREFILL_PATIENCE_S:
            return (1, seq.admitted_at)
        return (2, float(len(seq.pending)))

    return sorted(active, key=rank)  # stable: equal ranks keep admission order
