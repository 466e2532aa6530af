"""What the service tells its interfaces about itself: the models it runs, the generator's state, each
collection's size and the answer cache's. /health, /metrics, the collection routes and the CLI read
these instead of the service's members, so none of them depends on how a store or engine is built."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from docqa.core.types import GeneratorStats, Mode, Timings


@dataclass(frozen=True)
class AnswerOutcome:
    """What observers (metrics) learn of each finished answer."""

    mode: Mode
    cached: bool
    timings: Timings
    finish_reason: str


@dataclass(frozen=True)
class CollectionSummary:
    name: str
    created_at: datetime
    documents: dict[str, int] = field(default_factory=dict)  # by status: ready, failed, ingesting
    chunks: int = 0  # failed documents keep none

    @property
    def ready(self) -> int:
        return self.documents.get("ready", 0)


@dataclass(frozen=True)
class CacheStats:
    entries: int
    hits: int
    misses: int


@dataclass(frozen=True)
class ServiceStatus:
    """The loaded models by name (None: not loaded) and the generator's live state."""

    generator: str | None
    embedder: str | None
    reranker: str | None
    engine: GeneratorStats | None
