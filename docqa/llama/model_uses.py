"""Closing a llama.cpp model that other threads may be using: close waits for the calls in progress, and
a call after it is ModelClosedError, never a call into freed memory. Tokenising counts as a use: it reads
the model's vocabulary (an embedding's texts are tokenised on a thread of their own while another text is
decoded, and a query tokenised after shutdown crashed the process)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from docqa.core.errors import ModelClosedError


class ModelUses:
    def __init__(self, what: str) -> None:
        self._what = what  # what the error calls the model ("embedding model")
        self._changed = threading.Condition()
        self._running = 0
        self._closed = False

    @contextmanager
    def use(self) -> Iterator[None]:
        """Around every call into the model or its context."""
        with self._changed:
            if self._closed:
                raise ModelClosedError(self._what)
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()

    def close(self) -> None:
        """Refuse new uses and wait for the running ones to end; the caller then frees the model."""
        with self._changed:
            self._closed = True
            self._changed.wait_for(lambda: self._running == 0)
