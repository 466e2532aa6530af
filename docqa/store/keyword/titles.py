"""Which document a question names, judged by the documents' titles alone.

The keyword index's first pass finds a question's document by BM25 over passages, title and body
together. A long question with rare clause words ("... a change of control, such as a merger, stock
sale ...") can then find another contract that uses those words, although the question names its own
contract plainly ("In the AGENCY AGREEMENT involving Biopure Corporation"). Here each document's title
words (its file name and head, as the keyword index holds them) are kept in memory, and a document is
scored by the question's runs of consecutive words that its title holds (docqa.store.keyword.lexical.naming_runs),
each word weighted by how few of the collection's titles hold it. When one document's title names the
question clearly better than the first pass's document does, the search takes that document instead.
"""

from __future__ import annotations

import math
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from docqa.store.keyword import lexical
from docqa.store.keyword.ranking import DEFAULT_RANKING, RankingConstants
from docqa.store.keyword.tables import IndexTotals, KeywordTables
from docqa.store.keyword.term_stats import IndexVersion


def title_words(session: Session, tables: KeywordTables, passage_rowid: int) -> frozenset[str]:
    """The words of a passage's title column."""
    return frozenset(lexical.words(tables.title(session, passage_rowid)))


class DocumentTitles:
    """Every document's title words, by collection, kept in step with the keyword index: a search
    passes the index's version, and when it changed (a write) the documents added, replaced or
    deleted since are read again."""

    def __init__(self, tables: KeywordTables) -> None:
        self._tables = tables
        self._lock = threading.Lock()
        self._version = IndexVersion(IndexTotals(-1, -1), -1)
        self._titles: dict[int, tuple[int, int, frozenset[str]]] = {}  # document -> (collection, head chunk, words)
        self._postings: dict[int, dict[str, set[int]]] = {}  # collection -> word -> documents whose title holds it
        self._counts: Counter[int] = Counter()  # collection -> documents

    def refresh(self, session: Session, version: IndexVersion, passages_per_chunk: int) -> None:
        """Passages' rowids are chunk ID * passages_per_chunk + n; a document's head is its first chunk."""
        if version == self._version:
            return
        with self._lock:
            current = {
                int(doc): (int(coll), int(head))
                for doc, coll, head in session.execute(
                    text(
                        "SELECT c.document_id, d.collection_id, min(c.id) FROM chunks c "
                        "JOIN documents d ON d.id = c.document_id GROUP BY c.document_id, d.collection_id"
                    )
                )
            }
            for doc in [d for d, (coll, head, _) in self._titles.items() if current.get(d) != (coll, head)]:
                del self._titles[doc]
            for doc, (coll, head) in current.items():
                if doc not in self._titles:
                    self._titles[doc] = (coll, head, title_words(session, self._tables, head * passages_per_chunk))
            postings: dict[int, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
            for doc, (coll, _, words) in self._titles.items():
                for word in words:
                    postings[coll][word].add(doc)
            self._postings = postings
            self._counts = Counter(coll for coll, _, _ in self._titles.values())
            self._version = version

    def named_instead(
        self,
        collection_id: int,
        sequences: Sequence[Sequence[str]],
        first_pass_document: int,
        rc: RankingConstants = DEFAULT_RANKING,
    ) -> int | None:
        """The document whose title names the question (its clauses' words, `sequences`) clearly better than
        the first pass's document's title does (rc.title_ratio and rc.title_margin), or None."""
        with self._lock:
            postings = self._postings.get(collection_id, {})
            n = self._counts.get(collection_id, 0)
            weight = {
                word: math.log((n - len(postings[word]) + 0.5) / (len(postings[word]) + 0.5) + 1)
                * (rc.cjk_bigram_share if lexical.is_cjk(word) else 1.0)
                for sequence in sequences
                for word in sequence
                if word in postings
            }

            def score(document: int) -> float:
                entry = self._titles.get(document)
                names = lexical.naming_runs(sequences, entry[2]) if entry else set()
                return sum(weight[word] for word in names)

            needed = rc.title_ratio * score(first_pass_document) + rc.title_margin
            # A title first met in the postings of the i-th rarest word can score at most the weights of
            # that word and the commoner ones: once those add up to no more than needed, no title met
            # later can win, so common words' long postings ("agreement") are never walked.
            candidates: set[int] = set()
            rarest_first = sorted(weight, key=weight.__getitem__, reverse=True)
            left = sum(weight.values())
            for word in rarest_first:
                if left <= needed:
                    break
                candidates |= postings[word]
                left -= weight[word]
            # The weights of the question's words a title holds, in runs or not, bound its score: most
            # candidates fall below the threshold on that alone, without looking for runs.
            asked = frozenset(weight)
            scores = {
                document: score(document)
                for document in candidates - {first_pass_document}
                if sum(weight[word] for word in asked & self._titles[document][2]) > needed
            }
        best = max(scores, key=lambda document: (scores[document], -document), default=None)  # ties: the oldest
        return best if best is not None and scores[best] > needed else None
