"""Retrieval: a question -> the best chunks of one collection.

Dense search (FAISS over the embedder's vectors) and BM25 (SQLite FTS5) each propose candidates,
already filtered to the collection (and to one document when asked); reciprocal rank fusion merges
them, which needs no score calibration, with the dense ranking at a fraction of BM25's weight: with a
real embedding model (all-MiniLM-L6-v2) equal weights took 40 CUAD contracts from BM25's recall@3
0.974 to 0.913 (docs/benchmarks/retrieval.md). An optional reranker (docqa.retrieval.rerank) then reorders the
best few.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace

import numpy as np

from docqa.core.errors import EmbeddingModelMismatchError
from docqa.core.protocols import Embedder, Reranker
from docqa.core.query import Query
from docqa.core.settings import RerankSettings, RetrievalSettings
from docqa.core.types import RetrievedChunk
from docqa.profiles.registry import ProfileSet
from docqa.retrieval.rerank import rerank
from docqa.retrieval.understanding import understand
from docqa.store.index_protocols import VectorIndexSet
from docqa.store.models import CollectionRow
from docqa.store.protocol import Store

logger = logging.getLogger(__name__)

# A filter (`where`) that leaves up to this many documents is searched one document at a time and the
# rankings merged; one that leaves more searches the collection and keeps what is inside the filter.
MAX_DOCUMENTS_SEARCHED_ONE_BY_ONE = 32
FILTERED_CANDIDATES = 1000


def reciprocal_rank_fusion(
    rankings: list[list[int]], k: int, weights: list[float] | None = None
) -> list[tuple[int, float]]:
    """Fuse ranked ID lists: score(id) = sum over lists of weight / (k + rank), rank from 1."""
    scores: dict[int, float] = {}
    for n, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[n]
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


class Retriever:
    def __init__(
        self,
        store: Store,
        indexes: VectorIndexSet,
        embedder: Embedder | None,
        settings: RetrievalSettings,
        reranker: Reranker | None = None,
        rerank_settings: RerankSettings | None = None,
        profiles: ProfileSet | None = None,
    ) -> None:
        self._store = store
        # the document profiles that read questions (docqa.profiles); by default those DOCQA_RETRIEVAL_PROFILES names
        self.profiles = profiles if profiles is not None else ProfileSet.named(settings.profiles)
        self._indexes = indexes
        self._embedder = embedder
        self._settings = settings
        self._reranker = reranker
        self._rerank = rerank_settings or RerankSettings()
        self._keyword_pool = ThreadPoolExecutor(4, thread_name_prefix="docqa-keyword-search")

    def close(self) -> None:
        self._keyword_pool.shutdown(wait=True)

    def retrieve(
        self,
        collection: CollectionRow,
        question: str,
        top_k: int,
        document_id: int | None = None,
        retriever: str | None = None,
        query_vector: np.ndarray | None = None,
        document_ids: Sequence[int] | None = None,
        query: Query | None = None,
    ) -> list[RetrievedChunk]:
        """The top_k chunks; pass query_vector when the question is already embedded (benchmarks
        time the embedding apart from the search), and `query` when it is already understood (the
        asking service hands the same Query to the prompt windows). document_ids: only chunks of these
        documents (a catalog filter's documents; none: nothing is found)."""
        if query is None:
            query = self.understand(collection, question, scoped=document_id is not None)
        if document_ids is not None:
            if not document_ids:
                return []
            if len(document_ids) == 1:
                document_id, document_ids = document_ids[0], None
        kind = self.resolve(retriever or self._settings.retriever)
        n = max(self._settings.candidates, top_k)
        rankings: list[list[int]] = []
        dense: list[int] | None = None
        keyword: Future[list[tuple[int, float]]] | None = None
        if kind == "hybrid":
            # BM25 (SQLite) runs beside the question's embedding and the FAISS scan: both release the
            # GIL, so a hybrid search takes about as long as the slower half, not the sum.
            keyword = self._keyword_pool.submit(self._keyword, collection, query, n, document_id, document_ids)
        elif kind == "bm25":
            rankings.append([cid for cid, _ in self._keyword(collection, query, n, document_id, document_ids)])
        if kind in ("dense", "hybrid"):
            try:
                allowed = self._allowed_chunks(document_id, document_ids)
                dense = self._dense(collection, question, n, allowed, query_vector)
            except BaseException:
                if keyword is not None:
                    wait([keyword])  # no search left running behind the error
                raise
            if keyword is not None:
                rankings.append([cid for cid, _ in keyword.result()])
            if dense is not None:
                rankings.append(dense)
        weights = [1.0] * len(rankings)
        if kind == "hybrid" and dense is not None:
            weights[-1] = self._settings.dense_weight  # the dense ranking comes last, BM25's keeps 1.0
        keep = max(top_k, self._rerank.candidates) if self._reranker is not None else top_k
        fused = reciprocal_rank_fusion(rankings, self._settings.rrf_k, weights)[:keep]
        rows = self._store.fetch_chunks([cid for cid, _ in fused])
        chunks = [replace(rows[cid], score=score) for cid, score in fused if cid in rows]
        if self._reranker is not None and len(chunks) > 1:
            try:
                chunks = rerank(self._reranker, question, chunks, self._rerank)
            except RuntimeError:  # llama.cpp failed (out of GPU memory, ...): the first ranking still answers
                logger.exception("reranking failed; the first ranking's order is kept for this question")
        return chunks[:top_k]

    def understand(self, collection: CollectionRow, question: str, scoped: bool = False) -> Query:
        """The question read once (docqa.retrieval.understanding): its terms, and what the document profiles
        read in it (the collection's documents it names, the sections that hold the answer). scoped: the
        search is within one document, so the documents it names are not kept (the profiles still read the
        collection's identities, to tell a filer's name from a topic)."""
        profiles = self.profiles_for(collection)
        return understand(question, profiles, self._store.document_identities(collection.id), scoped)

    def profiles_for(self, collection: CollectionRow) -> ProfileSet:
        """The profiles a collection's questions are read with: those it chose among the deployment's, or all."""
        return self.profiles.subset(collection.profiles) if collection.profiles else self.profiles

    def signature(self) -> str:
        """What decides the sources this retriever finds by default, for the answer cache's key."""
        kind = self.resolve(self._settings.retriever)
        model = self._embedder.model_id if self._embedder is not None else None
        s = self._settings
        first = {
            "bm25": kind,
            "dense": f"dense:{model}",
            "hybrid": f"hybrid:{model}:{s.dense_weight}:{s.rrf_k}:{s.candidates}",
        }[kind]
        first += f"|profiles:{self.profiles.version_tag}"
        if self._reranker is None:
            return first
        r = self._rerank
        reranking = f"{self._reranker.model_id}:{r.candidates}:{r.windows_per_chunk}:{r.window_tokens}:{r.instruction}"
        return f"{first}|rerank:{reranking}"

    @staticmethod
    def resolve(kind: str) -> str:
        """auto -> bm25, the best on the dev set with every embedder measured (RetrievalSettings.retriever)."""
        return "bm25" if kind == "auto" else kind

    def _allowed_chunks(self, document_id: int | None, document_ids: Sequence[int] | None) -> np.ndarray | None:
        """The chunk IDs a scoped search may return (None: the whole collection)."""
        if document_ids is not None:
            return self._chunks_of(document_ids)
        return self._store.chunk_ids_of_document(document_id) if document_id is not None else None

    def _chunks_of(self, document_ids: Sequence[int]) -> np.ndarray:
        return np.concatenate([self._store.chunk_ids_of_document(d) for d in document_ids])

    def _keyword(
        self,
        collection: CollectionRow,
        query: Query,
        n: int,
        document_id: int | None,
        document_ids: Sequence[int] | None,
    ) -> list[tuple[int, float]]:
        """BM25 over the collection, one document, or the documents of a filter: a few are searched one
        by one (each as a one-document search ranks it) and merged by score; many, as the collection,
        keeping the candidates inside the filter."""
        if document_ids is None:
            return self._store.bm25(collection.id, query, n, document_id)
        if len(document_ids) <= MAX_DOCUMENTS_SEARCHED_ONE_BY_ONE:
            found = [hit for d in document_ids for hit in self._store.bm25(collection.id, query, n, d)]
            return sorted(found, key=lambda hit: (-hit[1], hit[0]))[:n]
        inside = set(self._chunks_of(document_ids).tolist())
        wide = self._store.bm25(collection.id, query, max(n, FILTERED_CANDIDATES))
        return [hit for hit in wide if hit[0] in inside][:n]

    def _dense(
        self, collection: CollectionRow, question: str, n: int, allowed: np.ndarray | None, query: np.ndarray | None
    ) -> list[int] | None:
        """Dense ranking, or None when this collection has no vectors or no embedder is loaded."""
        if self._embedder is None or collection.embed_model is None:
            return None
        if collection.embed_model != self._embedder.model_id:
            raise EmbeddingModelMismatchError(collection.name, collection.embed_model, self._embedder.model_id)
        index = self._indexes.get(collection)
        if index is None or len(index) == 0:
            return None
        if query is None:
            query = self._embedder.embed_query(question)
        return [cid for cid, _ in index.search(query, n, allowed)]
