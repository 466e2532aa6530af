"""The keyword search's store methods: index primitives over a question retrieval has understood
(docqa.store.relational.RelationalStore inherits them; docqa.store.keyword.index does the work).

The same on SQLite and Postgres; each search reads one snapshot of the database.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from sqlalchemy.orm import Session

from docqa.core.identity import DocumentIdentity
from docqa.core.query import Query
from docqa.core.types import RetrievedChunk
from docqa.store.keyword import index as keyword_index
from docqa.store.keyword import passage_bm25
from docqa.store.keyword.identities import DocumentIdentities
from docqa.store.keyword.ranking import RankingConstants
from docqa.store.keyword.term_stats import TermStats, index_version
from docqa.store.keyword.titles import DocumentTitles


class KeywordSearch:
    _term_stats: TermStats
    _titles: DocumentTitles
    _identities: DocumentIdentities
    ranking: RankingConstants

    def snapshot(self) -> AbstractContextManager[Session]:
        raise NotImplementedError

    def best_passage(self, query: Query, chunk: RetrievedChunk) -> int | None:
        """The chunk's passage (docqa.store.keyword.passages.split_passages order) the question matches best."""
        ranked = self.ranked_passages(query, chunk)
        return ranked[0][0] if ranked else None

    def term_weights(self, query: Query) -> dict[str, float]:
        """Each of the question's terms with its IDF over the collection's passages, as BM25 weighs it."""
        with self.snapshot() as s:
            stats = self._term_stats
            stats.refresh(s)
            rows = stats.tables.totals(s).rows
            terms = list(query.terms)
            return {
                term: passage_bm25.term_idf(rows, stats.phrase_frequency(s, term, tuple(stems)))
                for term, stems in zip(terms, stats.stems(terms), strict=True)
                if stems
            }

    def ranked_passages(self, query: Query, chunk: RetrievedChunk) -> list[tuple[int, float]]:
        """(passage number in split_passages order, score) of every passage of the chunk the question
        matches, best first."""
        with self.snapshot() as s:
            profile = self._identities.profile_of(chunk.document_id)  # as the last search read it
            return keyword_index.ranked_passages(
                s, self._term_stats, query, chunk.chunk_id, chunk.document_id, profile, self.ranking
            )

    def document_identities(self, collection_id: int) -> dict[int, DocumentIdentity]:
        """The identities of the collection's documents the profiles recognise (document ID -> what its file
        name and head say it is), for retrieval to match questions against; kept in memory, read again after the
        index changed."""
        with self.snapshot() as s:
            self._identities.refresh(s, index_version(s, self._term_stats.refresh(s)))
        return self._identities.of_collection(collection_id)

    def bm25(
        self, collection_id: int, query: Query, limit: int, document_id: int | None = None
    ) -> list[tuple[int, float]]:
        """(chunk ID, BM25 score, higher is better) for a question as retrieval understood it, filtered to
        one collection (or one of its documents)."""
        with self.snapshot() as s:
            return keyword_index.search(
                s,
                collection_id,
                query,
                limit,
                document_id,
                self._term_stats,
                self._titles,
                self._identities,
                self.ranking,
            )
