"""The keyword index in Postgres: docqa's own stems in a tsvector to find candidates, docqa's BM25 to rank them.

Postgres's `ts_rank` is not BM25, and its text search configurations stem differently from SQLite's
FTS5. So nothing here lets Postgres tokenise: a passage's words are cut and stemmed by docqa
(docqa.store.keyword.passage_stems.Stemmer, FTS5's porter stemmer, CJK as bigrams) and written as a
tsvector of those stems with their positions (lexemes given verbatim, as the `simple` configuration
would keep them), with a GIN index that finds the passages holding any of a question's stems. The
counts BM25 needs (passages per stem, passages and tokens in all) are kept in tables written in the
ingest's transaction, and the score is FTS5's `bm25()` formula (docqa.store.keyword.passage_bm25), so
a question ranks the same chunks on both databases.

A document's title (its name and head, FTS5's `title` column) is stored once per document, with its
own tsvector: a passage matches a term when its body or its document's title holds it, as in FTS5.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from sqlalchemy import Connection, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, BIGINT, TEXT
from sqlalchemy.orm import Session

from docqa.store.keyword import lexical, passage_stems, passages
from docqa.store.keyword.passage_bm25 import K1, B, term_idf
from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.keyword.tables import (
    FETCH_PER_CHUNK,
    MISSING_PASSAGES,
    PASSAGES_PER_CHUNK,
    DocumentPassages,
    IndexTotals,
    chunk_scores,
)
from docqa.store.postgres import postings
from docqa.store.postgres.tsvectors import phrase_count, stems_of, tsquery_literal, tsvector_literal

_LEXEMES = bindparam("lexemes", type_=ARRAY(TEXT))


@dataclass(frozen=True)
class _Asked:
    """A collection-wide ranking's question: its phrases (stems) with their IDFs, as a tsquery too."""

    collection_id: int
    phrases: list[list[str]]
    idf: list[float]
    query: str
    title_weight: float
    average: float  # the index's average passage length
    fetch: int  # passages to return


class PostgresKeywordTables:
    """docqa.store.keyword.tables.KeywordTables on Postgres (tables made by docqa's migrations)."""

    def __init__(self, stemmer: Stemmer) -> None:
        self._stemmer = stemmer

    def totals(self, session: Session) -> IndexTotals:
        """Read once per session: a search's session is one REPEATABLE READ snapshot, which the search
        asks four or five times (a write forgets it, _add_counts)."""
        known = _read_once(session)
        if "totals" not in known:
            passages_in_all, tokens = session.execute(
                text("SELECT passages, tokens FROM keyword_totals WHERE id = 1")
            ).one()
            known["totals"] = IndexTotals(int(passages_in_all), int(tokens))
        return cast(IndexTotals, known["totals"])

    def document_frequency(self, session: Session, stem: str) -> int:
        found = session.execute(text("SELECT passages FROM keyword_terms WHERE lexeme = :s"), {"s": stem}).scalar()
        return int(found or 0)

    def phrase_frequency(self, session: Session, term: str, stems: Sequence[str]) -> int:
        query = tsquery_literal([stems])
        if not query:
            return 0
        found = session.execute(
            text(
                "SELECT count(*) FROM passages p WHERE p.terms @@ CAST(:q AS tsquery) OR p.document_id IN "
                "(SELECT document_id FROM keyword_documents WHERE title_terms @@ CAST(:q AS tsquery))"
            ),
            {"q": query},
        ).scalar()
        return int(found or 0)

    def title(self, session: Session, passage_id: int) -> str:
        known = _read_once(session)
        if ("title", passage_id) not in known:
            found = session.execute(
                text(
                    "SELECT k.title FROM passages p JOIN keyword_documents k ON k.document_id = p.document_id "
                    "WHERE p.id = :r"
                ),
                {"r": passage_id},
            ).scalar()
            known["title", passage_id] = found or ""
        return cast(str, known["title", passage_id])

    def stored_stems(self, session: Session, rows: tuple[int, int], document_id: int) -> list[tuple[int, bytes, bytes]]:
        """The passages' stored stems; their lengths come in the same read, kept for `lengths` (the second
        pass asks for both, one round trip instead of two)."""
        found = session.execute(
            text(
                "SELECT id, body, headings, length FROM passages WHERE id >= :lo AND id < :hi "
                "AND document_id = :did ORDER BY id"
            ),
            {"lo": rows[0], "hi": rows[1], "did": document_id},
        ).all()
        _read_once(session)["lengths", rows] = {int(rowid): int(length) for rowid, _, _, length in found}
        return [(int(rowid), bytes(body), bytes(headings)) for rowid, body, headings, _ in found]

    def lengths(self, session: Session, rows: tuple[int, int]) -> dict[int, int]:
        """The lengths of the passages in `rows`; after stored_stems of those rows, of the passages it read."""
        known = _read_once(session).get(("lengths", rows))
        if known is not None:
            return cast(dict[int, int], known)
        found = session.execute(
            text("SELECT id, length FROM passages WHERE id >= :lo AND id < :hi"), {"lo": rows[0], "hi": rows[1]}
        )
        return {int(rowid): int(length) for rowid, length in found}

    def rank(
        self, session: Session, collection_id: int, terms: list[str], title_weight: float, limit: int
    ) -> list[tuple[int, float]]:
        """Posting lists (or, for a phrase of several stems, the GIN-indexed tsvectors) and the titles' index
        find the candidates; each is scored by FTS5's bm25()."""
        stems = self._stemmer.stems(terms)
        phrases = [s for s in stems if s]
        query = tsquery_literal(phrases)
        if not query:
            return []
        texts = [term for term, s in zip(terms, stems, strict=True) if s]
        totals = self.totals(session)  # once: the IDFs and the average length from the same read
        asked = _Asked(
            collection_id,
            phrases,
            self._idf(session, totals.rows, texts, phrases),
            query,
            title_weight,
            totals.average_length or 1.0,
            limit * FETCH_PER_CHUNK,
        )
        one_stem_each = all(len(phrase) == 1 for phrase in phrases)
        scored = self._scored_in_sql(session, asked) if one_stem_each else self._scored_here(session, asked)
        return chunk_scores((passage // PASSAGES_PER_CHUNK, score) for passage, score in scored)

    @staticmethod
    def _titled(session: Session, asked: _Asked) -> dict[int, bytes]:
        """The collection's documents whose title holds any of the phrases: their title stems."""
        found = session.execute(
            text(
                "SELECT document_id, title_stems FROM keyword_documents "
                "WHERE collection_id = :cid AND title_terms @@ CAST(:q AS tsquery)"
            ),
            {"cid": asked.collection_id, "q": asked.query},
        )
        return {int(document): bytes(stems) for document, stems in found}

    def _scored_in_sql(self, session: Session, asked: _Asked) -> list[tuple[int, float]]:
        """Every phrase one stem (nearly every question): scored in Postgres over the posting lists
        (docqa.store.postgres.postings), so only the best `fetch` passages leave it."""
        ids = [passage_stems.stem_id(phrase[0]) for phrase in asked.phrases]
        unique = sorted(set(ids))
        titles = []
        for document, stems in self._titled(session, asked).items():
            counts = passage_stems.counts([stems], [[stem] for stem in unique])[:, 0]
            titles += [(document, stem, int(n)) for stem, n in zip(unique, counts, strict=True) if n]
        terms = list(zip(ids, asked.idf, strict=True))
        shape = (asked.title_weight, asked.average, K1, B, asked.fetch)
        return postings.score(session, asked.collection_id, terms, titles, shape)

    def _scored_here(self, session: Session, asked: _Asked) -> list[tuple[int, float]]:
        """A phrase of several stems (a term the tokenizer splits): positions fetched, scored here."""
        collection_id, phrases, idf, query = asked.collection_id, asked.phrases, asked.idf, asked.query
        title_weight, average, fetch = asked.title_weight, asked.average, asked.fetch
        titled = self._titled(session, asked)
        lexemes = sorted({stem for phrase in phrases for stem in phrase})
        found = session.execute(
            text(
                "WITH candidates AS (SELECT id FROM passages WHERE collection_id = :cid AND terms @@ CAST(:q AS "
                "tsquery) UNION SELECT id FROM passages WHERE document_id = ANY(:titled)) "
                "SELECT p.id, p.document_id, p.length, u.lexeme, u.positions FROM candidates c "
                "JOIN passages p ON p.id = c.id "
                "LEFT JOIN LATERAL unnest(ts_filter(setweight(p.terms, 'A', :lexemes), '{a}')) u ON true"
            ).bindparams(_LEXEMES, bindparam("titled", type_=ARRAY(BIGINT))),
            {"cid": collection_id, "q": query, "lexemes": lexemes, "titled": sorted(titled)},
        ).all()
        positions: dict[int, dict[str, list[int]]] = defaultdict(dict)
        owner: dict[int, tuple[int, int]] = {}
        for passage, document, length, lexeme, at in found:
            owner[int(passage)] = (int(document), int(length))
            if lexeme is not None:
                positions[int(passage)][str(lexeme)] = list(at)
        in_title = {document: self._title_counts(stems, phrases) for document, stems in titled.items()}
        scored = []
        for passage, (document, length) in owner.items():
            title_hits = in_title.get(document)
            score = 0.0
            for n, phrase in enumerate(phrases):  # fts5_aux.c's bm25, phrase by phrase in query order
                body = phrase_count([positions[passage].get(stem, []) for stem in phrase])
                frequency = title_weight * (title_hits[n] if title_hits is not None else 0) + body
                score += idf[n] * ((frequency * (K1 + 1.0)) / (frequency + K1 * (1 - B + B * length / average)))
            scored.append((passage, score))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:fetch]

    def _idf(self, session: Session, rows: int, texts: list[str], phrases: list[list[str]]) -> list[float]:
        """fts5_aux.c's IDF of each phrase, from the passage counts (a phrase of several stems counted)."""
        single = sorted({phrase[0] for phrase in phrases if len(phrase) == 1})
        found = session.execute(
            text("SELECT lexeme, passages FROM keyword_terms WHERE lexeme = ANY(:lexemes)").bindparams(_LEXEMES),
            {"lexemes": single},
        )
        counts = {str(lexeme): int(n) for lexeme, n in found}
        idf = []
        for term, phrase in zip(texts, phrases, strict=True):
            hits = int(counts.get(phrase[0], 0)) if len(phrase) == 1 else self.phrase_frequency(session, term, phrase)
            idf.append(term_idf(rows, hits))
        return idf

    @staticmethod
    def _title_counts(title_stems: bytes, phrases: list[list[str]]) -> list[int]:
        ids = [[passage_stems.stem_id(stem) for stem in phrase] for phrase in phrases]
        return [int(n) for n in passage_stems.counts([title_stems], ids)[:, 0]]

    def write(self, session: Session | Connection, document: DocumentPassages, stemmer: Stemmer) -> None:
        if not document.passages:
            return
        title_stems = stems_of(stemmer, document.title)
        title_set = set(title_stems)
        stored = passage_stems.stored_rows(stemmer, document.passages)
        rows = []
        lists: list[tuple[int, int, list[int]]] = []  # (passage, length, body stem IDs) for the posting lists
        per_stem: Counter[str] = Counter()
        tokens = 0
        for (passage_id, passage_text), stems_row in zip(document.passages, stored, strict=True):
            body = stems_of(stemmer, lexical.index_text(passage_text))
            length = len(title_stems) + len(body)
            tokens += length
            per_stem.update(set(body) - title_set)
            lists.append((passage_id, length, np.frombuffer(cast(bytes, stems_row["body"]), dtype="<i8").tolist()))
            rows.append(
                {
                    "id": passage_id,
                    "chunk": passage_id // PASSAGES_PER_CHUNK,
                    "doc": document.document_id,
                    "cid": document.collection_id,
                    "length": length,
                    "terms": tsvector_literal(body),
                    "body": stems_row["body"],
                    "headings": stems_row["headings"],
                }
            )
        for stem in title_set:  # every passage holds its title's stems (FTS5's title column)
            per_stem[stem] = len(rows)
        session.execute(
            text(
                "INSERT INTO passages(id, chunk_id, document_id, collection_id, length, terms, body, headings) "
                "VALUES (:id, :chunk, :doc, :cid, :length, CAST(:terms AS tsvector), :body, :headings)"
            ),
            rows,
        )
        session.execute(
            text(
                "INSERT INTO keyword_documents(document_id, collection_id, title, title_terms, title_stems, "
                "term_counts, passages, tokens) VALUES (:doc, :cid, :title, CAST(:terms AS tsvector), :stems, "
                "CAST(:counts AS jsonb), :n, :tokens)"
            ),
            {
                "doc": document.document_id,
                "cid": document.collection_id,
                "title": document.title,
                "terms": tsvector_literal(title_stems),
                "stems": passage_stems.encode(stemmer.ids(document.title)),
                "counts": json.dumps(per_stem, ensure_ascii=False),
                "n": len(rows),
                "tokens": tokens,
            },
        )
        postings.write(session, document.collection_id, document.document_id, lists)
        _add_counts(session, per_stem, len(rows), tokens, sign=1)

    def forget(self, session: Session | Connection, document_id: int) -> None:
        found = session.execute(
            text("SELECT term_counts, passages, tokens FROM keyword_documents WHERE document_id = :d FOR UPDATE"),
            {"d": document_id},
        ).one_or_none()
        if found is None:
            return
        counts, n, tokens = found
        _add_counts(session, Counter(counts), int(n), int(tokens), sign=-1)
        postings.forget(session, document_id)
        session.execute(text("DELETE FROM passages WHERE document_id = :d"), {"d": document_id})
        session.execute(text("DELETE FROM keyword_documents WHERE document_id = :d"), {"d": document_id})

    def replace(self, session: Session | Connection, document: DocumentPassages, stemmer: Stemmer) -> None:
        self.forget(session, document.document_id)
        self.write(session, document, stemmer)

    def checks(self) -> list[tuple[str, str]]:
        """Missing passages first: repair indexes them again, then counts every total afresh."""
        return [
            (
                f"SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM passages p WHERE p.id = c.id * "
                f"{PASSAGES_PER_CHUNK})",
                MISSING_PASSAGES,
            ),
            (
                "SELECT count(*) FROM keyword_totals t WHERE t.passages != (SELECT count(*) FROM passages) "
                "OR t.tokens != (SELECT coalesce(sum(length), 0) FROM passages)",
                "keyword-index totals that disagree with its passages",
            ),
        ]

    def orphan_fixes(self) -> list[str]:
        """Foreign keys delete a chunk's passages with it; the totals and each stem's passages are
        counted again from the passages and their documents' records."""
        return [
            "UPDATE keyword_totals SET passages = (SELECT count(*) FROM passages), "
            "tokens = (SELECT coalesce(sum(length), 0) FROM passages) WHERE id = 1",
            "DELETE FROM keyword_terms",
            "INSERT INTO keyword_terms(lexeme, passages) SELECT c.key, sum(c.value::bigint) FROM keyword_documents k, "
            "jsonb_each_text(k.term_counts) c GROUP BY c.key",
        ]

    def reindex_all(self, conn: Connection, stemmer: Stemmer, only_missing: bool = False) -> int:
        """Index again every document (or every document one of whose chunks the index lacks)."""
        where = (
            f" WHERE EXISTS (SELECT 1 FROM chunks m WHERE m.document_id = d.id AND NOT EXISTS "
            f"(SELECT 1 FROM passages p WHERE p.id = m.id * {PASSAGES_PER_CHUNK}))"
            if only_missing
            else ""
        )
        documents = conn.execute(text("SELECT d.id, d.collection_id, d.name FROM documents d" + where)).all()
        done = 0
        for document_id, collection_id, name in documents:
            self.forget(conn, document_id)
            chunks = conn.execute(
                text("SELECT id, text FROM chunks WHERE document_id = :d ORDER BY ordinal"), {"d": document_id}
            ).all()
            if not chunks:
                continue
            cut = [(int(i), t) for i, t in chunks]
            self.write(conn, passages.document_passages(document_id, collection_id, name, cut[0][1], cut), stemmer)
            done += len(chunks)
        return done


def _add_counts(session: Session | Connection, per_stem: Counter[str], n: int, tokens: int, sign: int) -> None:
    """Add (sign 1) or take away (-1) a document's passages from the index's counts. Stems in sorted
    order, so two writers never wait on each other's rows in opposite orders."""
    _read_once(session).clear()  # what this session read of the index is stale from here
    stems = sorted(per_stem)
    session.execute(
        text(
            "INSERT INTO keyword_terms(lexeme, passages) SELECT * FROM unnest(:lexemes, :counts) "
            "ON CONFLICT (lexeme) DO UPDATE SET passages = keyword_terms.passages + excluded.passages"
        ).bindparams(_LEXEMES, bindparam("counts", type_=ARRAY(BIGINT))),
        {"lexemes": stems, "counts": [sign * per_stem[s] for s in stems]},
    )
    session.execute(
        text("UPDATE keyword_totals SET passages = passages + :n, tokens = tokens + :t WHERE id = 1"),
        {"n": sign * n, "t": sign * tokens},
    )


def _read_once(session: Session | Connection) -> dict[object, object]:
    """What this session has read of the index already (totals, titles, passage lengths). A search runs in
    one snapshot (the store's `snapshot`), so a second read would return the same; each statement is a
    round trip to the database, about a millisecond on a busy machine."""
    return cast(dict[object, object], session.info.setdefault("docqa_keyword_reads", {}))
