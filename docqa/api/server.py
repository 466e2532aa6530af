"""`docqa serve`: the app under uvicorn, with graceful shutdown.

On SIGTERM or Ctrl+C, stop taking work at once and let in-flight work finish: the first signal turns
/health to 503 (load balancers stop sending) and refuses new requests with 503 (docqa.api.draining),
while the answers being streamed and the uploads being ingested run on for up to
`api.shutdown_grace_s`; then uvicorn stops. A second signal stops at once. Whatever is cut off at
that point is safe: every document is written in one transaction, and FAISS heals from SQLite.
"""

from __future__ import annotations

import logging
import threading
import time
from types import FrameType

import uvicorn

from docqa.api import access_log
from docqa.api.main import create_app
from docqa.api.state import AppState

logger = logging.getLogger(__name__)


class DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, state: AppState, grace_s: float) -> None:
        super().__init__(config)
        self._state = state
        self._grace_s = grace_s

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._state.draining.is_set():  # asked twice: stop now
            logger.warning("second signal: stopping without waiting for %d request(s)", self._state.in_flight)
            self.force_exit = True
            self.should_exit = True
            return
        self._state.draining.set()
        logger.warning("shutting down: waiting up to %g s for %d request(s)", self._grace_s, self._state.in_flight)
        threading.Thread(target=self._stop_when_drained, name="docqa-drain", daemon=True).start()

    def _stop_when_drained(self) -> None:
        deadline = time.monotonic() + self._grace_s
        while self._state.in_flight > 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if self._state.in_flight:
            logger.warning("grace period over: %d request(s) cut off", self._state.in_flight)
        self.should_exit = True


def serve(app_state: AppState, host: str, port: int, log_level: str) -> None:
    """Run the app under uvicorn with graceful draining."""
    config = uvicorn.Config(
        create_app(state=app_state, owns_state=True),
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,  # docqa writes its own line per request (access_log.install)
        timeout_graceful_shutdown=2,  # after our own grace period, only stragglers remain
    )
    access_log.install()  # after uvicorn.Config, which configures its loggers
    DrainingServer(config, app_state, app_state.settings.api.shutdown_grace_s).run()
