"""The keyword index in SQLite: passages in an FTS5 table, their stems beside it (docqa.store.keyword.tables).

FTS5 keeps what BM25 needs itself: the averages record (`passage_fts_data`, row 1: passages and
tokens), each passage's length (`passage_fts_docsize`) and each term's passage count (`fts5vocab`).
A chunk's passages have the IDs chunk_id * 64 + k (docqa.store.keyword.tables.PASSAGES_PER_CHUNK),
so a trigger deletes them with their chunk and a document's passages are one ID range.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence

from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

from docqa.store.keyword import lexical, passage_stems, passages
from docqa.store.keyword.passage_stems import STEMS_DDL, TOKENIZER, Stemmer
from docqa.store.keyword.tables import (
    FETCH_PER_CHUNK,
    MISSING_PASSAGES,
    PASSAGES_PER_CHUNK,
    DocumentPassages,
    IndexTotals,
    chunk_scores,
)

# PRAGMA user_version: 1 and 2 indexed whole chunks in chunk_fts; 3 had passages without their stems;
# 4 kept only a passage's own numbered and capitals headings; 5 had no Chinese headings; 6 read a Chinese
# heading only at a line's start, and Chinese sentences after a number as headings; 7 did not read one
# capitalised word above a paragraph as a heading, 8 dropped an item heading's number, 9 missed a statement's
# title followed by the company's name. Since 11 a change of the heading rules is no new layout: it raises
# docqa.store.derived.HEADING_RULES, and `docqa reindex` reads each stale document again.
SCHEMA_VERSION = 11
_DDL = [
    f"CREATE VIRTUAL TABLE IF NOT EXISTS passage_fts USING fts5(title, body, tokenize='{TOKENIZER}')",
    STEMS_DDL,
    "CREATE TRIGGER IF NOT EXISTS chunks_passages_delete_v4 AFTER DELETE ON chunks BEGIN "
    f"DELETE FROM passage_fts WHERE rowid >= old.id * {PASSAGES_PER_CHUNK} "
    f"AND rowid < (old.id + 1) * {PASSAGES_PER_CHUNK}; "
    f"DELETE FROM passage_stems WHERE id >= old.id * {PASSAGES_PER_CHUNK} "
    f"AND id < (old.id + 1) * {PASSAGES_PER_CHUNK}; END",
    "CREATE VIRTUAL TABLE IF NOT EXISTS passage_vocab USING fts5vocab(passage_fts, 'row')",
]
_OLD_SCHEMA = [
    "DROP TRIGGER IF EXISTS chunks_passages_delete",
    "DROP TRIGGER IF EXISTS chunks_fts_insert",
    "DROP TRIGGER IF EXISTS chunks_fts_insert_v2",
    "DROP TRIGGER IF EXISTS chunks_fts_delete",
    "DROP TABLE IF EXISTS chunk_fts",
]
_INDEX_TABLES = (("passage_fts", "rowid", "keyword-index"), ("passage_stems", "id", "passage-stem"))
logger = logging.getLogger(__name__)


def varints(blob: bytes) -> list[int]:
    """The SQLite varints packed in blob (7 bits a byte, the high bit set on all but the last; a
    ninth byte carries 8)."""
    values: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        values.append(value)
    return values


class Fts5Tables:
    """docqa.store.keyword.tables.KeywordTables on SQLite FTS5."""

    def totals(self, session: Session) -> IndexTotals:
        """From FTS5's averages record (one row, no scan)."""
        block = session.execute(text("SELECT block FROM passage_fts_data WHERE id = 1")).scalar()
        counts = varints(bytes(block)) if block else [0]
        return IndexTotals(counts[0], sum(counts[1:]))

    def document_frequency(self, session: Session, stem: str) -> int:
        return int(session.execute(text("SELECT doc FROM passage_vocab WHERE term = :q"), {"q": stem}).scalar() or 0)

    def phrase_frequency(self, session: Session, term: str, stems: Sequence[str]) -> int:
        phrase = '"' + term.replace('"', '""') + '"'
        query = text("SELECT count(*) FROM passage_fts WHERE passage_fts MATCH :q")
        return int(session.execute(query, {"q": phrase}).scalar() or 0)

    def title(self, session: Session, passage_id: int) -> str:
        title = session.execute(text("SELECT title FROM passage_fts WHERE rowid = :r"), {"r": passage_id}).scalar()
        return title or ""

    def stored_stems(self, session: Session, rows: tuple[int, int], document_id: int) -> list[tuple[int, bytes, bytes]]:
        found = session.execute(
            text(
                "SELECT s.id, s.body, s.headings FROM passage_stems s "
                f"JOIN chunks c ON c.id = s.id / {PASSAGES_PER_CHUNK} "
                "WHERE s.id >= :lo AND s.id < :hi AND c.document_id = :did ORDER BY s.id"
            ),
            {"lo": rows[0], "hi": rows[1], "did": document_id},
        ).all()
        return [(int(rowid), bytes(body), bytes(headings)) for rowid, body, headings in found]

    def lengths(self, session: Session, rows: tuple[int, int]) -> dict[int, int]:
        return {
            int(rowid): sum(varints(bytes(size)))
            for rowid, size in session.execute(
                text("SELECT id, sz FROM passage_fts_docsize WHERE id >= :lo AND id < :hi"),
                {"lo": rows[0], "hi": rows[1]},
            )
        }

    def rank(
        self, session: Session, collection_id: int, terms: list[str], title_weight: float, limit: int
    ) -> list[tuple[int, float]]:
        """Rank passages index-wide, then keep the collection's. Filtering each of possibly 100k matches
        through a join on chunks and documents doubled the cost; the join runs only when the first
        page holds too few of this collection's passages (a small collection in a large store)."""
        query = lexical.match_expression(terms)
        if query is None:
            return []
        rank = f"bm25(passage_fts, {title_weight}, 1.0)"
        fetch = limit * FETCH_PER_CHUNK
        rows = session.execute(
            text(f"SELECT rowid / {PASSAGES_PER_CHUNK}, -{rank} FROM passage_fts WHERE passage_fts MATCH :q "
                 f"ORDER BY {rank} LIMIT :k"),
            {"q": query, "k": fetch},
        ).all()  # fmt: skip
        ranked = chunk_scores(rows)
        mine = _chunks_of_collection(session, collection_id, [chunk_id for chunk_id, _ in ranked])
        kept = [(chunk_id, score) for chunk_id, score in ranked if chunk_id in mine]
        if len(kept) >= limit or len(rows) < fetch:
            return kept
        joined = session.execute(
            text(
                f"SELECT p.rowid / {PASSAGES_PER_CHUNK}, -{rank} FROM passage_fts p "
                f"JOIN chunks c ON c.id = p.rowid / {PASSAGES_PER_CHUNK} JOIN documents d ON d.id = c.document_id "
                f"WHERE passage_fts MATCH :q AND d.collection_id = :cid ORDER BY {rank} LIMIT :k"
            ),
            {"q": query, "cid": collection_id, "k": fetch},
        )
        return chunk_scores(joined)

    def write(self, session: Session | Connection, document: DocumentPassages, stemmer: Stemmer) -> None:
        if not document.passages:
            return
        rows = [
            {"rowid": rowid, "title": document.title, "body": lexical.index_text(body)}
            for rowid, body in document.passages
        ]
        session.execute(text("INSERT INTO passage_fts(rowid, title, body) VALUES (:rowid, :title, :body)"), rows)
        stem_rows = passage_stems.stored_rows(stemmer, document.passages)
        session.execute(text("INSERT INTO passage_stems(id, body, headings) VALUES (:id, :body, :headings)"), stem_rows)

    def forget(self, session: Session | Connection, document_id: int) -> None:
        """Nothing to do: the chunks' trigger deletes their passages, and FTS5 keeps its own counts."""

    def replace(self, session: Session | Connection, document: DocumentPassages, stemmer: Stemmer) -> None:
        self._forget_chunks(session, sorted({rowid // PASSAGES_PER_CHUNK for rowid, _ in document.passages}))
        self.write(session, document, stemmer)

    @staticmethod
    def _forget_chunks(session: Session | Connection, chunk_ids: list[int]) -> None:
        """Deletes the chunks' passages and stems (their chunks kept)."""
        for chunk_id in chunk_ids:
            span = {"lo": chunk_id * PASSAGES_PER_CHUNK, "hi": (chunk_id + 1) * PASSAGES_PER_CHUNK}
            session.execute(text("DELETE FROM passage_fts WHERE rowid >= :lo AND rowid < :hi"), span)
            session.execute(text("DELETE FROM passage_stems WHERE id >= :lo AND id < :hi"), span)

    def checks(self) -> list[tuple[str, str]]:
        return [
            *(
                (f"SELECT count(*) FROM {table} WHERE {key} / {PASSAGES_PER_CHUNK} NOT IN (SELECT id FROM chunks)",
                 f"orphan {what} rows without a chunk")
                for table, key, what in _INDEX_TABLES
            ),
            (
                f"SELECT count(*) FROM chunks WHERE id * {PASSAGES_PER_CHUNK} NOT IN (SELECT rowid FROM passage_fts) "
                f"OR id * {PASSAGES_PER_CHUNK} NOT IN (SELECT id FROM passage_stems)",
                MISSING_PASSAGES,
            ),
        ]  # fmt: skip

    def orphan_fixes(self) -> list[str]:
        return [
            f"DELETE FROM {table} WHERE {key} / {PASSAGES_PER_CHUNK} NOT IN (SELECT id FROM chunks)"
            for table, key in (("passage_fts", "rowid"), ("passage_stems", "id"))
        ]

    def reindex_all(self, conn: Connection, stemmer: Stemmer, only_missing: bool = False) -> int:
        """(Re)write the passages and stems of every chunk, or only of chunks missing either; returns
        chunks done."""
        where = (
            f" WHERE c.id * {PASSAGES_PER_CHUNK} NOT IN (SELECT rowid FROM passage_fts)"
            f" OR c.id * {PASSAGES_PER_CHUNK} NOT IN (SELECT id FROM passage_stems)"
            if only_missing
            else ""
        )
        chunks = conn.execute(
            text(
                "SELECT c.id, c.text, d.id, d.name, (SELECT h.text FROM chunks h WHERE h.document_id = d.id "
                "ORDER BY h.ordinal LIMIT 1), d.collection_id FROM chunks c JOIN documents d ON d.id = c.document_id"
                + where
                + " ORDER BY d.id, c.ordinal"
            )
        ).all()
        for _, group in itertools.groupby(chunks, key=lambda row: row[2]):  # a document's chunks in order
            rows = list(group)
            _, _, document_id, name, head, collection_id = rows[0]
            document = passages.document_passages(
                document_id, collection_id, name, head or "", [(row[0], row[1]) for row in rows]
            )
            if only_missing:  # one of the two may be there: write both afresh
                self._forget_chunks(conn, [int(row[0]) for row in rows])
            self.write(conn, document, stemmer)
        return len(chunks)

    def create_or_migrate(self, conn: Connection, stemmer: Stemmer) -> None:
        version = int(conn.execute(text("PRAGMA user_version")).scalar() or 0)
        if version < SCHEMA_VERSION:
            for statement in _OLD_SCHEMA:
                conn.execute(text(statement))
        for statement in _DDL:
            conn.execute(text(statement))
        if version < SCHEMA_VERSION:
            chunks = int(conn.execute(text("SELECT count(*) FROM chunks")).scalar() or 0)
            if chunks:  # minutes for a large index (147 s at 100k chunks on a 16-core box): say why it waits
                logger.warning("rebuilding the keyword index of %d chunks for this docqa version (once)", chunks)
            conn.execute(text("DELETE FROM passage_fts"))
            conn.execute(text("DELETE FROM passage_stems"))
            self.reindex_all(conn, stemmer)
            conn.execute(text(f"PRAGMA user_version = {SCHEMA_VERSION}"))


def _chunks_of_collection(session: Session, collection_id: int, chunk_ids: list[int]) -> set[int]:
    if not chunk_ids:
        return set()
    # Look the chunks up by ID and compare collections here: with the collection in the WHERE
    # clause, SQLite's planner walked every chunk of the collection (40 ms at 100k chunks).
    rows = session.execute(
        text(
            "SELECT c.id, d.collection_id FROM chunks c JOIN documents d ON d.id = c.document_id "
            f"WHERE c.id IN ({','.join(str(int(i)) for i in chunk_ids)})"
        )
    )
    return {int(chunk_id) for chunk_id, owner in rows if owner == collection_id}
