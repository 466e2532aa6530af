"""How common each search term is in the keyword index, so a search can leave out near-useless ones.

FTS5 computes BM25 for every passage that matches any OR-ed term. A word like "agreement" sits in
nearly every passage of a contract collection: at 100,000 chunks one such word made a search take
about a second, while BM25 gives it almost no weight. The first (collection-wide) pass of a search
therefore uses the question's rarest terms, as many as keep the passages to score within a budget:
they name what the question is about (parties, products, rare clause words) and find its document.
The second pass, inside that one document, uses every term BM25 gives weight to.

Document frequencies come from FTS5's own vocabulary (fts5vocab), on the stemmed forms FTS5
indexes; the stemmer is FTS5's own too (a private in-memory table with the same tokenizer).
Counting a common term reads its whole posting list (~6 ms at 100k passages), so figures are
cached for ten minutes: they only steer which terms to use, and an older count steers as well.
"""

from __future__ import annotations

import sqlite3
import threading
import time

from sqlalchemy import text
from sqlalchemy.orm import Session

TOKENIZER = "porter unicode61 remove_diacritics 2"  # must equal passage_fts's
VOCABULARY_DDL = "CREATE VIRTUAL TABLE IF NOT EXISTS passage_vocab USING fts5vocab(passage_fts, 'row')"
ROW_BUDGET = 10_000  # the first pass scores at most about this many passages (the rarest terms')
TTL_S = 600.0


class TermStats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stemmer = sqlite3.connect(":memory:", check_same_thread=False)
        self._stemmer.execute(f"CREATE VIRTUAL TABLE terms USING fts5(t, tokenize='{TOKENIZER}')")
        self._stemmer.execute("CREATE VIRTUAL TABLE stems USING fts5vocab(terms, 'instance')")
        self._df: dict[str, tuple[int, float]] = {}
        self._stems: dict[str, list[str]] = {}
        self._total: tuple[int, float] = (0, -TTL_S)

    def stems(self, terms: list[str]) -> list[list[str]]:
        """FTS5's indexed forms of each term (usually one; a term the tokenizer splits gives more).
        A search asks twice (first pass, second pass), so they are remembered."""
        with self._lock:
            missing = [t for t in dict.fromkeys(terms) if t not in self._stems]
            if missing:
                if len(self._stems) > 100_000:  # bound the memo, like the counts below
                    self._stems.clear()
                self._stemmer.execute("DELETE FROM terms")
                self._stemmer.executemany("INSERT INTO terms(rowid, t) VALUES (?, ?)", list(enumerate(missing)))
                found: list[list[str]] = [[] for _ in missing]
                for stem, row in self._stemmer.execute("SELECT term, doc FROM stems ORDER BY doc, offset"):
                    found[row].append(stem)
                self._stems.update(zip(missing, found, strict=True))
            return [self._stems[t] for t in terms]

    def total(self, session: Session) -> int:
        count, at = self._total
        if time.monotonic() - at > TTL_S:
            count = int(session.execute(text("SELECT count(*) FROM passage_fts_docsize")).scalar() or 0)
            self._total = (count, time.monotonic())
        return count

    def document_frequency(self, session: Session, stem: str) -> int:
        cached = self._df.get(stem)
        if cached is not None and time.monotonic() - cached[1] <= TTL_S:
            return cached[0]
        found = session.execute(text("SELECT doc FROM passage_vocab WHERE term = :t"), {"t": stem}).scalar()
        if len(self._df) > 100_000:  # bound the cache; it refills from the queries that follow
            self._df.clear()
        self._df[stem] = (int(found or 0), time.monotonic())
        return int(found or 0)

    def _frequencies(self, session: Session, terms: list[str]) -> dict[str, int]:
        return {
            term: max((self.document_frequency(session, s) for s in stems), default=0)
            for term, stems in zip(terms, self.stems(terms), strict=True)
        }

    def selective(self, session: Session, terms: list[str]) -> list[str]:
        """The terms worth a collection-wide search, in their order: the rarest ones, as many as fit
        a budget of ROW_BUDGET matching passages (FTS5 scores each match, ~2 us apiece on a CPU
        core), and at least the rarest one."""
        if self.total(session) < ROW_BUDGET or len(terms) <= 1:
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
        total = self.total(session)
        if total < ROW_BUDGET:
            return terms
        frequency = self._frequencies(session, terms)
        kept = [t for t in terms if frequency[t] < total / 2]
        return kept or terms
