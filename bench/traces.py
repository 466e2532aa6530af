"""What a streamed request's timing looks like, the same for docqa's engine and for llama-server:
when it was sent, when each piece arrived, and the figures of many streams together."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field


@dataclass
class Trace:
    submitted: float
    stamps: list[float] = field(default_factory=list)  # arrival time of every streamed piece
    tokens: int = 0
    sources: float | None = None  # when docqa said its citations: retrieval done, the prompt about to be sent
    retrieval_ms: float = 0.0  # docqa's own timing of the ask's retrieval (its `done` event)

    @property
    def ttft(self) -> float:
        return self.stamps[0] - self.submitted

    @property
    def finished(self) -> float:
        return self.stamps[-1]

    @property
    def decode_rate(self) -> float:
        """Tokens/s after the first one: from the first piece to the end."""
        return (self.tokens - 1) / (self.finished - self.stamps[0])


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def stream_figures(prefix: str, traces: list[Trace], wall: float) -> dict[str, float]:
    """Wall time, time to first token and inter-token latency of concurrent streams, the same for docqa
    and llama-server (gaps between pieces after the first, the final event left out)."""
    gaps = [b - a for t in traces for a, b in zip(t.stamps[1:-1], t.stamps[2:-1], strict=False)]
    return {
        f"{prefix}_wall_s": wall,
        f"{prefix}_ttft_p50_s": statistics.median(t.ttft for t in traces),
        f"{prefix}_ttft_p95_s": pct([t.ttft for t in traces], 0.95),
        f"{prefix}_ttft_max_s": max(t.ttft for t in traces),
        f"{prefix}_itl_p50_ms": statistics.median(gaps) * 1000,
        f"{prefix}_itl_p95_ms": pct(gaps, 0.95) * 1000,
    }
