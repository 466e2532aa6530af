"""A completion's text as it streams out of llama.cpp: token bytes decoded as UTF-8 incrementally,
stop strings held back and cut, as vLLM's detokenizer does. Shared by the serial generator and the
batching engine."""

from __future__ import annotations

import codecs


class StopMatcher:
    """Holds back text that could be the start of a stop string, and cuts at the first full match."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._stops = [s for s in stops if s]
        self._pending = ""

    def feed(self, text: str) -> tuple[str, bool]:
        """Returns (text safe to emit now, whether a stop string was reached)."""
        self._pending += text
        if not self._stops:
            out, self._pending = self._pending, ""
            return out, False
        cut = min((i for i in (self._pending.find(s) for s in self._stops) if i >= 0), default=-1)
        if cut >= 0:
            out, self._pending = self._pending[:cut], ""
            return out, True
        hold = 0
        for s in self._stops:
            for n in range(min(len(s) - 1, len(self._pending)), 0, -1):
                if self._pending.endswith(s[:n]):
                    hold = max(hold, n)
                    break
        out = self._pending[: len(self._pending) - hold]
        self._pending = self._pending[len(out) :]
        return out, False

    def flush(self) -> str:
        out, self._pending = self._pending, ""
        return out


class OutputText:
    """A completion's text as it streams: token bytes decoded as UTF-8 incrementally (one character can
    span tokens), then held back where it could start a stop string and cut at the first one."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stops = StopMatcher(stops)

    def decode(self, piece: bytes) -> str:
        return self._decoder.decode(piece)

    def feed(self, text: str) -> tuple[str, bool]:
        """(text safe to emit now, whether a stop string was reached)."""
        return self._stops.feed(text)

    def tail(self) -> str:
        """What is still held back, at the end of a generation that did not stop on a stop string."""
        return self._stops.flush() + self._decoder.decode(b"", final=True)
