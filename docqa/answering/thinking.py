"""Splitting a streamed Qwen3 completion into reasoning (inside <think>...</think>) and answer.

Text arrives in arbitrary pieces, so a tag can be split across two of them: the splitter holds back
any tail that could still become a tag. Reasoning never reaches the answer channel.
"""

from __future__ import annotations

from typing import Literal

OPEN, CLOSE = "<think>", "</think>"
Channel = Literal["reasoning", "answer"]


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest end of text that is a proper start of tag."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0


class ThinkSplitter:
    def __init__(self) -> None:
        self._state: Literal["start", "reasoning", "answer"] = "start"
        self._buffer = ""
        self._answer_started = False
        self._reasoning_started = False

    def feed(self, text: str) -> list[tuple[Channel, str]]:
        self._buffer += text
        out: list[tuple[Channel, str]] = []
        while True:
            if self._state == "start":
                stripped = self._buffer.lstrip()
                if stripped.startswith(OPEN):
                    self._state, self._buffer = "reasoning", stripped[len(OPEN) :]
                    continue
                if OPEN.startswith(stripped):  # empty, or a tag still arriving
                    return out
                self._state = "answer"
                continue
            if self._state == "reasoning":
                end = self._buffer.find(CLOSE)
                if end >= 0:
                    self._emit_reasoning(out, self._buffer[:end])
                    self._state, self._buffer = "answer", self._buffer[end + len(CLOSE) :]
                    continue
                keep = _partial_suffix(self._buffer, CLOSE)
                self._emit_reasoning(out, self._buffer[: len(self._buffer) - keep])
                self._buffer = self._buffer[len(self._buffer) - keep :]
                return out
            # answer: a stray closing tag (a model that thinks although told not to) is dropped
            keep = max(_partial_suffix(self._buffer, CLOSE), _partial_suffix(self._buffer, OPEN))
            ready = self._buffer[: len(self._buffer) - keep].replace(CLOSE, "")
            self._buffer = self._buffer[len(self._buffer) - keep :]
            self._emit_answer(out, ready)
            return out

    def finish(self) -> list[tuple[Channel, str]]:
        """Flush what is held back at the end of generation."""
        out: list[tuple[Channel, str]] = []
        rest, self._buffer = self._buffer, ""
        if self._state == "reasoning":
            self._emit_reasoning(out, rest)
        elif rest.strip() and rest.strip() not in (OPEN, CLOSE):
            self._emit_answer(out, rest)
        return out

    def _emit_reasoning(self, out: list[tuple[Channel, str]], text: str) -> None:
        if not self._reasoning_started:
            text = text.lstrip("\n")
        if text:
            self._reasoning_started = True
            out.append(("reasoning", text))

    def _emit_answer(self, out: list[tuple[Channel, str]], text: str) -> None:
        if not self._answer_started:
            text = text.lstrip()
        if text:
            self._answer_started = True
            out.append(("answer", text))
