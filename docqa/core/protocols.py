"""The seams between docqa's stages: what the service, retrieval and ingest need of a generator, an
embedder, a reranker and a vector index, and nothing of how one is built.

A new backend (a remote OpenAI-compatible generator, a pgvector index) implements one of these and
is chosen in `docqa.components`; no caller changes. Only typing here: importing it loads no model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from docqa.core.sampling_params import SamplingParams
from docqa.core.streams import GenerationStream
from docqa.core.types import GeneratorInfo, GeneratorStats


class Generator(Protocol):
    """Turns a rendered prompt into a stream of text events. Implementations queue what they cannot
    run yet (beyond their bound: BusyError) and must be safe to call from many threads."""

    info: GeneratorInfo

    def count_tokens(self, prompt: str) -> int: ...

    def submit(
        self, prompt: str, params: SamplingParams, loop: asyncio.AbstractEventLoop | None = None
    ) -> GenerationStream: ...

    def stats(self) -> GeneratorStats:
        """What /health and /metrics show: the queue, and the KV cache where there is one."""
        ...

    def close(self) -> None: ...


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed_documents(
        self, texts: Sequence[str], on_batch: Callable[[int, int], None] | None = None
    ) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def close(self) -> None: ...


class Reranker(Protocol):
    model_id: str

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score per document, higher is more relevant."""
        ...

    def close(self) -> None: ...


class VectorIndex(Protocol):
    """Chunk vectors of one collection, by chunk ID; SQLite keeps the vectors it is rebuilt from."""

    dim: int

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None: ...

    def remove(self, ids: np.ndarray) -> None: ...

    def search(self, query: np.ndarray, k: int, allowed_ids: np.ndarray | None = None) -> list[tuple[int, float]]: ...

    def ids(self) -> np.ndarray: ...

    def __len__(self) -> int: ...

    def save(self) -> None: ...
