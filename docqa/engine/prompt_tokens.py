"""Prompts tokenized once: the tokens `count_tokens` made, kept for the request that submits the same text.

An ask counts its prompt's tokens while it is prepared (the prompt must fit the context) and then submits
that prompt. Tokenizing it again at admission ran in the engine's loop thread, between steps: ~10 ms for a
12k-token prompt on the development VM, so a burst of 16 RAG prompts held the GPU idle for the time of 16
tokenizations while it was reading their prompts (docs/benchmarks/gpu-engine.md, "Asks reach the engine
sooner"). Kept by text, the newest last, within a bound on the tokens held; a text submitted takes its entry,
and one submitted uncounted is tokenized in the submitting thread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

# Tokens held at most: 16 prompts of 16k tokens and the chunks counted beside them, 4 MiB of int32.
MAX_HELD_TOKENS = 1 << 20


class TokenizedPrompts:
    """Text -> tokens, for texts counted and not yet submitted; safe to use from many threads."""

    def __init__(self, tokenize: Callable[[str], Sequence[int]], max_held_tokens: int = MAX_HELD_TOKENS) -> None:
        self._tokenize = tokenize
        self._max_held = max_held_tokens
        self._held: OrderedDict[str, np.ndarray] = OrderedDict()
        self._held_tokens = 0
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        """The text's token count; its tokens are kept for `take` (a text held already is not tokenized again:
        a node counts a prompt for its `/tokenize` route and again before it submits it)."""
        with self._lock:
            held = self._held.get(text)
            if held is not None:
                self._held.move_to_end(text)
                return len(held)
        tokens = np.asarray(self._tokenize(text), dtype=np.int32)
        with self._lock:
            previous = self._held.pop(text, None)
            if previous is not None:
                self._held_tokens -= len(previous)
            self._held[text] = tokens
            self._held_tokens += len(tokens)
            while self._held_tokens > self._max_held and len(self._held) > 1:
                _, oldest = self._held.popitem(last=False)
                self._held_tokens -= len(oldest)
        return len(tokens)

    def take(self, text: str) -> np.ndarray | None:
        """The tokens `count` made of this text (and no longer kept), or None if it was not counted lately."""
        with self._lock:
            tokens = self._held.pop(text, None)
            if tokens is not None:
                self._held_tokens -= len(tokens)
            return tokens

    def take_or_make(self, text: str) -> np.ndarray | None:
        """The tokens `count` made of this text, else made now, in the caller's thread (a prompt submitted
        uncounted: a node's raw completion, a bench's), so that the engine's loop does not tokenize between its
        steps. None where the tokenizer fails: admission tries once more and fails that request alone."""
        tokens = self.take(text)
        if tokens is not None:
            return tokens
        try:
            return np.asarray(self._tokenize(text), dtype=np.int32)
        except Exception:  # admission meets the fault again, logs it and ends the request with an error
            return None

    @property
    def held_tokens(self) -> int:
        with self._lock:
            return self._held_tokens
