"""What the API process holds: settings and, once loaded, the DocQA library object."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from docqa.api.metrics import Metrics
from docqa.core.settings import Settings
from docqa.service import DocQA

logger = logging.getLogger(__name__)


@dataclass
class AppState:
    settings: Settings
    qa: DocQA | None = None
    load_error: str | None = None
    loaded: threading.Event = field(default_factory=threading.Event)
    draining: threading.Event = field(default_factory=threading.Event)  # shutting down: refuse new work
    in_flight: int = 0  # requests being served, /health aside
    metrics: Metrics | None = None
    _in_flight_lock: threading.Lock = field(default_factory=threading.Lock)

    def enter(self) -> None:
        with self._in_flight_lock:
            self.in_flight += 1

    def leave(self) -> None:
        with self._in_flight_lock:
            self.in_flight -= 1

    def load(self) -> None:
        """Load the models (in a background thread, so /health can answer 503 meanwhile)."""
        try:
            self.qa = DocQA.open(self.settings)
            if self.metrics is not None:
                self.metrics.attach(self.qa)
        except Exception as exc:
            logger.exception("loading the models failed")
            self.load_error = str(exc) if hasattr(exc, "http_status") else f"{type(exc).__name__}"
        finally:
            self.loaded.set()

    def close(self) -> None:
        self.loaded.wait(timeout=600)
        if self.qa is not None:
            self.qa.close()
