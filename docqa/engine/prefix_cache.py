"""Bookkeeping for KV prefix reuse: which cache sequence holds which token prefix.

The engine keeps recent prompts' KV cells alive under spare sequence IDs of llama.cpp's KV cache (in
a unified cache the copy shares cells; with per-sequence streams it copies them). A new prompt starts
from the entry with the longest common prefix, which always includes the system prompt. Entries are
bounded by a token budget and evicted least recently used first.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from docqa.llama.token_batch import common_prefix


@dataclass
class CacheEntry:
    seq_id: int
    tokens: np.ndarray
    last_used: int = 0


@dataclass
class PrefixCache:
    seq_ids: Sequence[int]  # the llama.cpp sequence IDs reserved for cached prefixes
    budget_tokens: int
    entries: dict[int, CacheEntry] = field(default_factory=dict)
    _clock: itertools.count = field(default_factory=itertools.count)

    def tokens_held(self) -> int:
        return sum(len(e.tokens) for e in self.entries.values())

    def lookup(self, prompt: np.ndarray) -> tuple[CacheEntry | None, int]:
        """The entry sharing the longest prefix with prompt, and that length (0: none)."""
        best: CacheEntry | None = None
        best_len = 0
        for entry in self.entries.values():
            n = common_prefix(entry.tokens, prompt)
            if n > best_len:
                best, best_len = entry, n
        if best is not None:
            best.last_used = next(self._clock)
        return best, best_len

    def covers(self, prompt: np.ndarray) -> bool:
        """Whether some entry already holds this whole prompt (no need to store it again)."""
        return any(
            len(e.tokens) >= len(prompt) and common_prefix(e.tokens, prompt) == len(prompt)
            for e in self.entries.values()
        )

    def can_keep(self, tokens: int) -> bool:
        """Whether a prompt of this many tokens could be kept at all (no cache sequences, or a budget
        below it: never; a later prompt cannot start from it, so none waits for it)."""
        return bool(self.seq_ids) and tokens <= self.budget_tokens

    def plan_insert(self, tokens: np.ndarray) -> tuple[int | None, list[int]]:
        """Where to store a new prefix: (sequence ID, IDs to evict first), or (None, []) if it cannot fit."""
        if len(tokens) > self.budget_tokens:
            return None, []
        evict: list[int] = []
        held = self.tokens_held()
        free = [s for s in self.seq_ids if s not in self.entries]
        victims = sorted(self.entries.values(), key=lambda e: e.last_used)
        for victim in victims:
            if free and held + len(tokens) <= self.budget_tokens:
                break
            evict.append(victim.seq_id)
            held -= len(victim.tokens)
            free.append(victim.seq_id)
        if not free or held + len(tokens) > self.budget_tokens:
            return None, []
        return free[0], evict

    def insert(self, seq_id: int, tokens: np.ndarray) -> None:
        self.entries[seq_id] = CacheEntry(seq_id, tokens.copy(), next(self._clock))

    def remove(self, seq_id: int) -> None:
        self.entries.pop(seq_id, None)

    def evictable(self) -> list[int]:
        """Entries, least recently used first (to free KV cells under pressure)."""
        return [e.seq_id for e in sorted(self.entries.values(), key=lambda e: e.last_used)]
