"""A thread-to-consumer event stream: a generation worker thread pushes events; a sync iterator or
an asyncio task reads them. Cancelling (client gone, Ctrl-C) is seen by the worker within one token."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class GenEvent:
    kind: Literal["text", "finished", "failed"]
    text: str = ""
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


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
        if self._loop is None:
            self._sync.put(event)
            return
        assert self._async is not None
        try:
            self._loop.call_soon_threadsafe(self._async.put_nowait, event)
        except RuntimeError:  # the consumer's event loop has closed: nobody is listening
            self._cancel.set()

    def __iter__(self) -> Iterator[GenEvent]:
        try:
            while True:
                event = self._sync.get()
                yield event
                if event.kind != "text":
                    return
        finally:
            self._cancel.set()

    async def __aiter__(self) -> AsyncIterator[GenEvent]:
        assert self._async is not None, "create the stream with the consumer's event loop"
        try:
            while True:
                event = await self._async.get()
                yield event
                if event.kind != "text":
                    return
        finally:
            self._cancel.set()
