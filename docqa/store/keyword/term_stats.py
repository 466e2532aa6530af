"""How common each search term is in the keyword index, so a search can leave out near-useless ones.

FTS5 computes BM25 for every passage that matches any OR-ed term. A word like "agreement" sits in
nearly every passage of a contract collection: at 100,000 chunks one such word made a search take
about a second, while BM25 gives it almost no weight. The first (collection-wide) pass of a search
therefore uses the question's rarest terms, as many as keep the passages to score within a budget:
they name what the question is about (parties, products, rare clause words) and find its document.
The second pass, inside that one document, uses every term BM25 gives weight to.

Document frequencies come from FTS5's own vocabulary (fts5vocab), on the stemmed forms FTS5
indexes; the stemmer is FTS5's own too (docqa.store.keyword.passage_stems.Stemmer).
Counting a common term reads its whole posting list (~6 ms at 100k passages), so figures are
cached until the index's totals (rows, tokens) change, and for ten minutes at most. The second pass
computes BM25 from them (docqa.store.keyword.passage_bm25), so they must be FTS5's current counts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.orm import Session

from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.keyword.tables import IndexTotals, KeywordTables

ROW_BUDGET = 10_000  # the first pass scores at most about this many passages (the rarest terms')
TTL_S = 600.0


@dataclass(frozen=True)
class IndexVersion:
    """What every write to the keyword index changes: its totals, or the newest chunk ID (chunk IDs are
    never reused, so a document replaced by one of the same length changes it all the same)."""

    totals: IndexTotals
    newest_chunk: int


def index_version(session: Session, totals: IndexTotals) -> IndexVersion:
    newest = session.execute(text("SELECT max(id) FROM chunks")).scalar()
    return IndexVersion(totals, int(newest or 0))


class TermStats:
    def __init__(self, tables: KeywordTables, stemmer: Stemmer | None = None) -> None:
        self.tables = tables
        self._lock = threading.Lock()
        self.stemmer = stemmer or Stemmer()
        self._df: dict[str, tuple[int, float]] = {}
        self.totals = IndexTotals(0, 0)

    def refresh(self, session: Session) -> IndexTotals:
        """Read the index's totals; when they changed (a write), forget the counts. A search calls
        this once, first."""
        totals = self.tables.totals(session)
        if totals != self.totals:
            with self._lock:
                self._df.clear()
            self.totals = totals
        return totals

    def stems(self, terms: list[str]) -> list[list[str]]:
        """FTS5's indexed forms of each term (usually one; a term the tokenizer splits gives more)."""
        return self.stemmer.stems(terms)

    def document_frequency(self, session: Session, stem: str) -> int:
        return self._count(stem, lambda: self.tables.document_frequency(session, stem))

    def phrase_frequency(self, session: Session, term: str, stems: tuple[str, ...]) -> int:
        """Passages holding the term: its one stem's count, or for a term the tokenizer splits
        into several (a phrase to FTS5), the passages matching the phrase, counted and cached."""
        if len(stems) == 1:
            return self.document_frequency(session, stems[0])
        if not stems:
            return 0
        key = "\x00" + " ".join(stems)  # no stem holds a NUL: phrase entries never meet stems
        return self._count(key, lambda: self.tables.phrase_frequency(session, term, stems))

    def _count(self, key: str, count: Callable[[], int]) -> int:
        """A passage count, from the cache while it is fresh, else counted."""
        cached = self._df.get(key)
        if cached is not None and time.monotonic() - cached[1] <= TTL_S:
            return cached[0]
        found = count()
        if len(self._df) > 100_000:  # bound the cache; it refills from the queries that follow
            self._df.clear()
        self._df[key] = (found, time.monotonic())
        return found

    def _frequencies(self, session: Session, terms: list[str]) -> dict[str, int]:
        return {
            term: max((self.document_frequency(session, s) for s in stems), default=0)
            for term, stems in zip(terms, self.stems(terms), strict=True)
        }

    def selective(self, session: Session, terms: list[str]) -> list[str]:
        """The terms worth a collection-wide search, in their order: the rarest ones, as many as fit
        a budget of ROW_BUDGET matching passages (FTS5 scores each match, ~2 us apiece on a CPU
        core), and at least the rarest one."""
        if self.totals.rows < ROW_BUDGET or len(terms) <= 1:
            return terms
        frequency = self._frequencies(session, terms)
        keep: set[str] = set()
        rows = 0
        for term in sorted(terms, key=lambda t: frequency[t]):
            if keep and rows + frequency[term] > ROW_BUDGET:
                break
            keep.add(term)
            rows += frequency[term]
        return [t for t in terms if t in keep]

    def weighted(self, session: Session, terms: list[str]) -> list[str]:
        """The terms BM25 gives any weight: FTS5 floors the IDF of a term in half the passages or
        more to 1e-6, yet counts its whole posting list for every query that names it."""
        total = self.totals.rows
        if total < ROW_BUDGET:
            return terms
        frequency = self._frequencies(session, terms)
        kept = [t for t in terms if frequency[t] < total / 2]
        return kept or terms
