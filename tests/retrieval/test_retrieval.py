"""Hybrid retrieval's orchestration: BM25 in a worker thread beside the dense search (fakes: pure logic)."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from docqa.core.errors import EmbeddingModelMismatchError
from docqa.core.query import Query
from docqa.core.settings import RetrievalSettings
from docqa.core.types import RetrievedChunk
from docqa.retrieval.retriever import Retriever, reciprocal_rank_fusion


class _Store:
    def __init__(self) -> None:
        self.keyword_threads: list[str] = []
        self.keyword_done = threading.Event()

    def document_identities(self, collection_id: int) -> dict[int, Any]:
        return {}

    def bm25(self, collection_id: int, query: Query, n: int, document_id: int | None) -> list[tuple[int, float]]:
        self.keyword_threads.append(threading.current_thread().name)
        time.sleep(0.05)  # long enough for the dense half to run meanwhile
        self.keyword_done.set()
        return [(1, 3.0), (2, 2.0), (3, 1.0)]

    def fetch_chunks(self, ids: list[int]) -> dict[int, RetrievedChunk]:
        return {i: RetrievedChunk(i, 1, "doc.txt", i, f"chunk {i}", 1, 1, 0.0) for i in ids}


class _Index:
    def __len__(self) -> int:
        return 4

    def search(self, query: np.ndarray, k: int, allowed: Any) -> list[tuple[int, float]]:
        return [(3, 0.9), (4, 0.8)]


class _Indexes:
    def get(self, collection: Any) -> _Index:
        return _Index()


class _Embedder:
    def __init__(self, model_id: str) -> None:
        self.model_id, self.dim = model_id, 4

    def embed_query(self, text: str) -> np.ndarray:
        return np.ones(4, dtype=np.float32) / 2


class _Collection:
    id, name, embed_model, profiles = 1, "c", "model-a", None


def _retriever(store: _Store, model_id: str) -> Retriever:
    return Retriever(store, _Indexes(), _Embedder(model_id), RetrievalSettings())  # type: ignore[arg-type]


def test_hybrid_runs_bm25_in_a_worker_and_fuses_both_rankings() -> None:
    store = _Store()
    chunks = _retriever(store, "model-a").retrieve(_Collection(), "q", 4, retriever="hybrid")  # type: ignore[arg-type]
    assert chunks[0].chunk_id == 3  # in both rankings: fusion puts it first
    assert {c.chunk_id for c in chunks} == {1, 2, 3, 4}
    assert store.keyword_threads and store.keyword_threads[0].startswith("docqa-keyword-search")


def test_fusion_weights_the_dense_ranking_below_bm25s() -> None:
    """With equal weights, dense search's first chunk (4, unknown to BM25) passes BM25's second; at a
    quarter of BM25's weight it stays below BM25's own chunks. Chunk 3, in both lists, leads either way."""

    keyword, dense = [1, 2, 3], [4, 3]
    assert [chunk_id for chunk_id, _ in reciprocal_rank_fusion([keyword, dense], 10)] == [3, 1, 4, 2]
    weighted = reciprocal_rank_fusion([keyword, dense], 10, [1.0, 0.25])
    assert [chunk_id for chunk_id, _ in weighted] == [3, 1, 2, 4]
    assert weighted[0][1] == pytest.approx(1 / 13 + 0.25 / 12)


def test_the_signature_names_what_decides_the_sources() -> None:
    """The answer cache keys on it: answers found by another retriever, model or weight are other entries."""
    store = _Store()
    signatures = {
        Retriever(store, _Indexes(), _Embedder(model), settings).signature()  # type: ignore[arg-type]
        for model in ("model-a", "model-b")
        for settings in (
            RetrievalSettings(),
            RetrievalSettings(retriever="hybrid"),
            RetrievalSettings(retriever="hybrid", dense_weight=0.5),
            RetrievalSettings(retriever="dense"),
        )
    }
    assert len(signatures) == 7  # bm25 does not depend on the embedding model
    plain = Retriever(store, _Indexes(), None, RetrievalSettings())  # type: ignore[arg-type]
    assert plain.signature() == "bm25|profiles:csrc@1,sec@1,contracts@1"  # what reads the questions, too
    generic = Retriever(store, _Indexes(), None, RetrievalSettings(profiles="none"))  # type: ignore[arg-type]
    assert generic.signature() == "bm25|profiles:none"


def test_a_dense_error_surfaces_after_the_keyword_search_has_finished() -> None:
    store = _Store()
    with pytest.raises(EmbeddingModelMismatchError):
        _retriever(store, "model-b").retrieve(_Collection(), "q", 3, retriever="hybrid")  # type: ignore[arg-type]
    assert store.keyword_done.is_set()  # nothing left running behind the error
