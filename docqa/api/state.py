"""What the API process holds: settings and, once loaded, the DocQA library object (or, for a node started
with `--generator-only`, just its models: ModelNode)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from docqa.api.key_slots import KeySlots
from docqa.api.metrics import Metrics
from docqa.core.errors import DocqaError, EndpointUnavailableError
from docqa.core.settings import Settings
from docqa.service import DocQA
from docqa.service.node import ModelNode, ModelServer
from docqa.service.reindexing import bring_up_to_date

logger = logging.getLogger(__name__)

# An LLM endpoint not answering at start-up is tried again after this, doubling up to the most
ENDPOINT_RETRY_FIRST_S = 1.0
ENDPOINT_RETRY_MAX_S = 10.0


@dataclass
class AppState:
    settings: Settings
    qa: DocQA | None = None
    load_error: str | None = None
    waiting_for: str | None = None  # what loading waits for (an LLM endpoint not answering yet), for /health
    loaded: threading.Event = field(default_factory=threading.Event)
    draining: threading.Event = field(default_factory=threading.Event)  # shutting down: refuse new work
    cut_off: threading.Event = field(default_factory=threading.Event)  # its grace over: end the answers streaming
    in_flight: int = 0  # requests being served, /health aside
    metrics: Metrics | None = None
    generator_only: bool = False  # a generation node: models, no data home
    node: ModelNode | None = None
    _in_flight_lock: threading.Lock = field(default_factory=threading.Lock)
    slots: KeySlots = field(init=False)  # generations at once per API key
    named_keys: bool | None = None  # whether the store held named keys when last asked (None: not yet asked)

    def __post_init__(self) -> None:
        api, llm = self.settings.api, self.settings.llm
        self.slots = KeySlots(api.generations_per_key or max(1, llm.n_parallel - 1))

    def enter(self) -> None:
        with self._in_flight_lock:
            self.in_flight += 1

    def leave(self) -> None:
        with self._in_flight_lock:
            self.in_flight -= 1

    def load(self) -> None:
        """Load the models (in a background thread, so /health can answer 503 meanwhile). An LLM endpoint
        that is not answering yet (a node started beside this process, still loading its model) is waited
        for, retried every few seconds, and said in /health, until it answers or the process stops."""
        try:
            if self.generator_only:
                self.node = ModelNode.open(self.settings)
                return
            self.qa = self._open_waiting_for_the_endpoint()
            bring_up_to_date(self.qa, logger.warning)  # documents older rules read: read again, said in a line
            if self.metrics is not None:
                self.metrics.attach(self.qa)
        except DocqaError as exc:  # said in one line (a bad setting, a full disk), as the CLI says it
            logger.error("loading failed: %s", exc)
            self.load_error = str(exc)
        except Exception as exc:
            logger.exception("loading the models failed")
            self.load_error = str(exc) if hasattr(exc, "http_status") else f"{type(exc).__name__}"
        finally:
            self.loaded.set()

    def _open_waiting_for_the_endpoint(self) -> DocQA:
        pause = ENDPOINT_RETRY_FIRST_S
        while True:
            try:
                qa = DocQA.open(self.settings)
            except EndpointUnavailableError as exc:
                self.waiting_for = f"{exc}; retrying every {pause:g} s"
                logger.warning("%s", self.waiting_for)
                if self.draining.wait(pause):
                    raise
                pause = min(pause * 2, ENDPOINT_RETRY_MAX_S)
                continue
            self.waiting_for = None
            return qa

    @property
    def server(self) -> ModelServer | None:
        """What serves the node routes (completions, tokenize, embeddings), once loaded."""
        return self.qa if self.qa is not None else self.node

    def close(self) -> None:
        self.loaded.wait(timeout=600)
        if self.qa is not None:
            self.qa.close()
        if self.node is not None:
            self.node.close()
