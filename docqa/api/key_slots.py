"""Generations at once per API key: one key (one script in a loop, one user's eight tabs) cannot hold every
sequence of the engine while another key's question waits. A slot is taken when an answer starts and given
back when its last event is sent (or the client leaves); past the key's limit the request gets 429 at once."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import contextmanager
from typing import TypeVar

from docqa.core.errors import KeyGenerationsError
from docqa.core.tenants import Grant

T = TypeVar("T")


class KeySlots:
    def __init__(self, default_limit: int) -> None:
        """default_limit: a key's limit where its own (Grant.max_generations) is unset."""
        self.default_limit = max(1, default_limit)
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()

    def limit(self, grant: Grant) -> int | None:
        if not grant.keyed:
            return None  # one local user: the engine's own queue is the only bound
        return grant.max_generations or self.default_limit

    def take(self, grant: Grant) -> None:
        """Take a slot for the grant's key, or KeyGenerationsError (429) when it holds its limit already."""
        limit = self.limit(grant)
        if limit is None:
            return
        with self._lock:
            if self._held[grant.owner] >= limit:
                raise KeyGenerationsError(limit)
            self._held[grant.owner] += 1

    def give_back(self, grant: Grant) -> None:
        if self.limit(grant) is None:
            return
        with self._lock:
            self._held[grant.owner] -= 1
            if self._held[grant.owner] <= 0:
                del self._held[grant.owner]

    @contextmanager
    def slot(self, grant: Grant) -> Iterator[None]:
        self.take(grant)
        try:
            yield
        finally:
            self.give_back(grant)

    async def opened(self, grant: Grant, events: AsyncIterator[T]) -> tuple[T, AsyncIterator[T]]:
        """Take a slot, then the first of `events` (so that an error before the answer starts is still an HTTP
        status); returns it and the rest, whose end, failure or abandonment (the client gone) gives the slot
        back. The slot is given back at once when the first event fails."""
        self.take(grant)
        held = self._streamed(grant, events)
        try:
            first = await anext(held)  # started: its `finally` runs even if the rest is never read
        except BaseException:
            await held.aclose()
            raise
        return first, held

    async def _streamed(self, grant: Grant, events: AsyncIterator[T]) -> AsyncGenerator[T]:
        try:
            async for event in events:
                yield event
        finally:
            self.give_back(grant)
