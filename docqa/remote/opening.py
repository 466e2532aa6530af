"""An upstream request's opening, handed from the thread that opens it to the caller that waits for it, for
a bounded time.

The caller (an ask about to send its citations, a route about to answer 200) waits up to
DOCQA_LLM_ENDPOINT_STATUS_WAIT_S for the upstream's response status, so that a refusal there (429, 503) or a
failure (unreachable, 500) is still docqa's own HTTP status before any byte. Past the wait it goes on with the
stream: llama.cpp's server sends a streamed request's status only when that request's prompt first enters one
of its batches, which take a few prompts at a time, so under a burst the citations of the last asks waited
for the prompts read before theirs (docs/benchmarks/gpu-engine.md, "The issue's own code beside this one").
An outcome that comes after the caller stopped waiting is the stream's to report.
"""

from __future__ import annotations

import threading


class Opening:
    """One request's opening: settled once by the opening thread, waited for once by the caller."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._settled = threading.Event()
        self._error: BaseException | None = None
        self._abandoned = False

    def settle(self, error: BaseException | None = None) -> bool:
        """The outcome (None: the request is open). False when the caller no longer waits: an error is then
        the stream's to report."""
        with self._lock:
            if self._abandoned:
                return False
            self._error = error
            self._settled.set()
            return True

    def wait(self, timeout_s: float) -> BaseException | None:
        """The opening's error where it settled within timeout_s with one; None where it opened, or is still
        opening (the caller stops waiting then, and a later outcome goes to the stream)."""
        self._settled.wait(timeout_s)
        with self._lock:
            if self._settled.is_set():
                return self._error
            self._abandoned = True
            return None
