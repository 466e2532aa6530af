"""Where the keyword index's rows live, as the search sees them: one protocol, one implementation per database.

The search (docqa.store.keyword.index) and its second pass (docqa.store.keyword.passage_bm25) compute
FTS5's BM25 from a passage's stored stems, lengths and the index's term counts; only where those rows
are kept differs. SQLite keeps them in FTS5's own tables (docqa.store.keyword.fts5_tables); Postgres in
ordinary tables with a tsvector for finding candidates (docqa.store.postgres.keyword_tables). Both
return the same scores for the same documents, so a store can move from one to the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from docqa.store.keyword.passage_stems import Stemmer

PASSAGES_PER_CHUNK = 64  # a passage's ID = chunk_id * 64 + k; a 4096-token chunk needs about 8-16
MISSING_PASSAGES = "chunk rows missing from the keyword index or its stems"  # what `checks` calls them
FETCH_PER_CHUNK = 4  # a collection-wide ranking reads this many passages per chunk asked for: a chunk can own several


@dataclass(frozen=True)
class IndexTotals:
    """What BM25 needs of the whole index: passages, and their tokens in all columns together."""

    rows: int
    tokens: int

    @property
    def average_length(self) -> float:
        return self.tokens / self.rows if self.rows else 0.0


@dataclass(frozen=True)
class DocumentPassages:
    """One document's passages as an ingest writes them: (passage ID, text) in order, and its title."""

    document_id: int
    collection_id: int
    title: str
    passages: Sequence[tuple[int, str]]


class KeywordTables(Protocol):
    """The keyword index's storage. Every method runs in the caller's session (its transaction)."""

    def totals(self, session: Session) -> IndexTotals:
        """Passages in the index and their tokens (title and body)."""
        ...

    def document_frequency(self, session: Session, stem: str) -> int:
        """Passages holding the stem in their title or body."""
        ...

    def phrase_frequency(self, session: Session, term: str, stems: Sequence[str]) -> int:
        """Passages holding the stems adjacent and in order (a term the tokenizer splits)."""
        ...

    def title(self, session: Session, passage_id: int) -> str:
        """The passage's title column: its document's name and head, as indexed ("" for no such passage)."""
        ...

    def stored_stems(self, session: Session, rows: tuple[int, int], document_id: int) -> list[tuple[int, bytes, bytes]]:
        """(passage ID, body stems, heading stems) of the document's passages in the ID range, in order."""
        ...

    def lengths(self, session: Session, rows: tuple[int, int]) -> dict[int, int]:
        """Tokens (title and body) of each passage in the ID range."""
        ...

    def rank(
        self, session: Session, collection_id: int, terms: list[str], title_weight: float, limit: int
    ) -> list[tuple[int, float]]:
        """The collection's chunks whose passages match any of the terms, as FTS5's bm25(title_weight, 1.0)
        ranks passages: (chunk ID, its best passage's score; higher is better), best first, from the best
        FETCH_PER_CHUNK x limit passages."""
        ...

    def write(self, session: Session | Connection, document: DocumentPassages, stemmer: Stemmer) -> None:
        """Index a document's passages (in the transaction that writes its chunks)."""
        ...

    def forget(self, session: Session | Connection, document_id: int) -> None:
        """Before a document's chunks are deleted: take its passages out of the index's counts."""
        ...

    def replace(self, session: Session | Connection, document: DocumentPassages, stemmer: Stemmer) -> None:
        """Index a stored document's passages again, its chunks kept (docqa.store.derived)."""
        ...

    def checks(self) -> list[tuple[str, str]]:
        """(SQL counting bad rows, what they are) for `docqa check`; `--repair` deletes orphans by
        `orphan_fixes` and calls reindex_all(only_missing=True) for chunks the index lacks."""
        ...

    def orphan_fixes(self) -> list[str]:
        """SQL statements deleting index rows whose chunk is gone."""
        ...

    def reindex_all(self, conn: Connection, stemmer: Stemmer, only_missing: bool = False) -> int:
        """(Re)write the passages of every chunk, or only of chunks the index lacks; returns chunks done."""
        ...


def chunk_scores(rows: Iterable[Any], other_passages: float = 0.0) -> list[tuple[int, float]]:
    """Passage rows (chunk ID, score), best first -> each chunk once, scored by its best passage plus
    other_passages x the sum of its other ones, best first."""
    best: dict[int, float] = {}
    others: dict[int, float] = {}
    for chunk_id, score in rows:
        if int(chunk_id) in best:
            others[int(chunk_id)] = others.get(int(chunk_id), 0.0) + float(score)
        else:
            best[int(chunk_id)] = float(score)
    if not other_passages:
        return list(best.items())
    scored = {c: s + other_passages * others.get(c, 0.0) for c, s in best.items()}
    return sorted(scored.items(), key=lambda item: -item[1])
