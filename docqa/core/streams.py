"""A thread-to-consumer event stream: a generation worker thread pushes events; a sync iterator or
an asyncio task reads them. Cancelling (client gone, Ctrl-C) is seen by the worker within one token."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from docqa.core.errors import BusyError, DocqaError


@dataclass(frozen=True)
class GenEvent:
    kind: Literal["text", "finished", "failed", "progress"]
    text: str = ""
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_done: int = 0  # progress: prompt tokens read so far (cached ones included), of prompt_tokens
    # failed: the domain error, where one says what failed (an endpoint's timeout: 504), kept to the client
    error: DocqaError | None = field(default=None, compare=False)

    @property
    def final(self) -> bool:
        """The last event of its stream (text and progress come before it)."""
        return self.kind in ("finished", "failed")


# How often a thread reading a stream wakes while it waits. A Ctrl+C that the OS hands to another thread
# (llama.cpp's, busy reading a long prompt) is raised in the main thread only when that thread runs Python
# again: a wait without a timeout held the CLI past the whole prompt (over 60 s on a loaded 2-core CI run).
WAKE_S = 0.2


class GenerationStream:
    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._cancel = threading.Event()
        self._sync: queue.SimpleQueue[GenEvent] = queue.SimpleQueue()
        self._loop = loop
        self._async: asyncio.Queue[GenEvent] | None = asyncio.Queue() if loop is not None else None

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()

    def put(self, event: GenEvent) -> None:
        """Called from the worker thread."""
        deliver([(self, event)])

    def __iter__(self) -> Iterator[GenEvent]:
        try:
            while True:
                try:
                    event = self._sync.get(timeout=WAKE_S)
                except queue.Empty:
                    continue
                yield event
                if event.final:
                    return
        finally:
            self._cancel.set()

    async def __aiter__(self) -> AsyncIterator[GenEvent]:
        assert self._async is not None, "create the stream with the consumer's event loop"
        try:
            while True:
                event = await self._async.get()
                yield event
                if event.final:
                    return
        finally:
            self._cancel.set()


def deliver(items: list[tuple[GenerationStream, GenEvent]]) -> None:
    """Hand events to their consumers, in order, from the worker thread. Streams read from one event
    loop (the server's) get all their events with one wake-up of that loop, not one per event: with
    64 streams, a wake-up per token per stream cost the scheduler more than sampling did."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[GenerationStream, GenEvent]]] = {}
    for stream, event in items:
        if stream._loop is None:
            stream._sync.put(event)
        else:
            by_loop.setdefault(stream._loop, []).append((stream, event))
    for loop, batch in by_loop.items():
        try:
            loop.call_soon_threadsafe(_put_all, batch)
        except RuntimeError:  # the consumer's event loop has closed: nobody is listening
            for stream, _ in batch:
                stream._cancel.set()


def _put_all(batch: list[tuple[GenerationStream, GenEvent]]) -> None:
    for stream, event in batch:
        assert stream._async is not None
        stream._async.put_nowait(event)


class _Waiting(Protocol):
    stream: GenerationStream


W = TypeVar("W", bound=_Waiting)


class WaitQueue(Generic[W]):
    """Requests waiting for a generator, bounded. A request whose client gave up (its stream is
    cancelled) frees its place at once, not when the worker reaches it. `cond` guards the queue and
    is what a worker waits on."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.cond = threading.Condition()
        self._items: deque[W] = deque()

    def put(self, item: W, spare: int = 0) -> None:
        """Queue item, or raise BusyError when `limit + spare` live requests already wait."""
        with self.cond:
            self._items = deque(i for i in self._items if not i.stream.cancelled)
            if len(self._items) >= self.limit + spare:
                raise BusyError(f"{len(self._items)} requests are already waiting for the generator; retry shortly")
            self._items.append(item)
            self.cond.notify()

    def peek(self) -> W | None:
        """The oldest live request (cancelled ones ahead of it are dropped). Call with `cond` held."""
        while self._items and self._items[0].stream.cancelled:
            self._items.popleft()
        return self._items[0] if self._items else None

    def pop(self) -> W | None:
        """Remove and return the oldest live request. Call with `cond` held."""
        item = self.peek()
        if item is not None:
            self._items.popleft()
        return item

    def cancel_all(self) -> None:
        with self.cond:
            for item in self._items:
                item.stream.cancel()
            self.cond.notify_all()

    def __len__(self) -> int:
        return len(self._items)

    def live(self) -> int:
        """How many waiting requests still have their client (the others go when the queue next looks)."""
        with self.cond:
            return sum(1 for item in self._items if not item.stream.cancelled)
