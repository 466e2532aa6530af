"""Whether what an ask needs answers now: the database and, where an LLM endpoint generates, that endpoint.

/health said "ok" while the database was down or the generator node dead, and every ask then failed 502/503;
a load balancer kept sending asks. It now asks these, at most every CHECK_EVERY_S (load balancers poll
/health every few seconds; a dead host must not make each poll wait its timeout), and says what is down.
"""

from __future__ import annotations

import logging
import threading
import time

from docqa.core.errors import DocqaError
from docqa.core.protocols import Generator
from docqa.remote.openai_generator import OpenAIGenerator
from docqa.store.protocol import Store

CHECK_EVERY_S = 5.0
logger = logging.getLogger(__name__)


class Liveness:
    def __init__(self, store: Store, generator: Generator | None) -> None:
        self._store = store
        self._generator = generator
        self._lock = threading.Lock()
        self._checked_at = -CHECK_EVERY_S
        self._down: dict[str, str] = {}

    def down(self) -> dict[str, str]:
        """What does not answer (the database, the LLM endpoint) -> why; empty when all do."""
        with self._lock:
            if time.monotonic() - self._checked_at >= CHECK_EVERY_S:
                self._down = self._check()
                self._checked_at = time.monotonic()
            return dict(self._down)

    def _check(self) -> dict[str, str]:
        down: dict[str, str] = {}
        try:
            self._store.ping()
        except DocqaError as exc:  # said without the server's socket path or host (the log has them)
            down["database"] = getattr(exc, "public_message", None) or str(exc)
            logger.warning("/health: %s", exc)
        except Exception as exc:  # a driver's own error: the database still does not answer
            down["database"] = f"{type(exc).__name__}"
        if isinstance(self._generator, OpenAIGenerator):
            try:
                self._generator.ping()
            except DocqaError as exc:
                down["llm_endpoint"] = str(exc)
        return down
