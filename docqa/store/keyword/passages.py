"""The keyword index's tables and how passages are written to them: a chunk cut into passages of about
500 tokens, each with its document's title column and its stems, in the chunk's transaction.

Passages are written with their chunks, in the same transaction, and so are their stems
(docqa.store.keyword.passage_stems, which the second pass counts terms in); a trigger deletes both with their
chunk. Their rowid is chunk_id * 64 + passage number, so a chunk's passages are one rowid range.
docqa.store.keyword.index searches them.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterable

from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

from docqa.store.keyword import lexical, passage_stems
from docqa.store.keyword.passage_stems import STEMS_DDL, TOKENIZER, Stemmer
from docqa.store.keyword.term_stats import VOCABULARY_DDL

PASSAGE_CHARS = 2000  # about 500 tokens of English
PASSAGES_PER_CHUNK = 64  # rowid = chunk_id * 64 + k; a 4096-token chunk needs about 8-16
HEAD_CHARS = 1000  # how much of a document's first chunk joins its name in the title
# PRAGMA user_version: 1 and 2 indexed whole chunks in chunk_fts; 3 had passages without their stems;
# 4 kept only a passage's own numbered and capitals headings; 5 had no Chinese headings
SCHEMA_VERSION = 6

DDL = [
    f"CREATE VIRTUAL TABLE IF NOT EXISTS passage_fts USING fts5(title, body, tokenize='{TOKENIZER}')",
    STEMS_DDL,
    "CREATE TRIGGER IF NOT EXISTS chunks_passages_delete_v4 AFTER DELETE ON chunks BEGIN "
    f"DELETE FROM passage_fts WHERE rowid >= old.id * {PASSAGES_PER_CHUNK} "
    f"AND rowid < (old.id + 1) * {PASSAGES_PER_CHUNK}; "
    f"DELETE FROM passage_stems WHERE id >= old.id * {PASSAGES_PER_CHUNK} "
    f"AND id < (old.id + 1) * {PASSAGES_PER_CHUNK}; END",
    VOCABULARY_DDL,
]
_OLD_SCHEMA = [
    "DROP TRIGGER IF EXISTS chunks_passages_delete",
    "DROP TRIGGER IF EXISTS chunks_fts_insert",
    "DROP TRIGGER IF EXISTS chunks_fts_insert_v2",
    "DROP TRIGGER IF EXISTS chunks_fts_delete",
    "DROP TABLE IF EXISTS chunk_fts",
]
logger = logging.getLogger(__name__)
_PARAGRAPH = re.compile(r"(\n\s*\n)")


def split_passages(chunk_text: str) -> list[str]:
    """Cut at paragraph breaks into pieces of about PASSAGE_CHARS; an overlong paragraph is cut
    into windows that overlap by 200 characters, so no sentence is lost at a cut."""
    passages: list[str] = []
    current = ""
    for part in _PARAGRAPH.split(chunk_text):
        if current.strip() and len(current) + len(part) > PASSAGE_CHARS:
            passages.append(current)
            current = ""
        current += part
        while len(current) > PASSAGE_CHARS * 3 // 2:
            passages.append(current[:PASSAGE_CHARS])
            current = current[PASSAGE_CHARS - 200 :]
    if current.strip() or not passages:
        passages.append(current)
    if len(passages) > PASSAGES_PER_CHUNK:  # only for chunks far beyond 4k tokens: merge the tail
        passages[PASSAGES_PER_CHUNK - 1 :] = ["".join(passages[PASSAGES_PER_CHUNK - 1 :])]
    return passages


def title_of(document_name: str, first_chunk_text: str) -> str:
    return lexical.index_text(f"{document_name} {first_chunk_text[:HEAD_CHARS]}")


def index_chunks(
    session: Session | Connection, title: str, chunks: Iterable[tuple[int, str]], stemmer: Stemmer
) -> None:
    """Write the passages of (chunk ID, text) pairs of one document, and their stems."""
    passages = [
        (chunk_id * PASSAGES_PER_CHUNK + k, passage)
        for chunk_id, chunk_text in chunks
        for k, passage in enumerate(split_passages(chunk_text))
    ]
    if passages:
        rows = [{"rowid": rowid, "title": title, "body": lexical.index_text(body)} for rowid, body in passages]
        session.execute(text("INSERT INTO passage_fts(rowid, title, body) VALUES (:rowid, :title, :body)"), rows)
        stem_rows = passage_stems.stored_rows(stemmer, passages)
        session.execute(text("INSERT INTO passage_stems(id, body, headings) VALUES (:id, :body, :headings)"), stem_rows)


def reindex_all(conn: Connection, stemmer: Stemmer, only_missing: bool = False) -> int:
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
            "ORDER BY h.ordinal LIMIT 1) FROM chunks c JOIN documents d ON d.id = c.document_id"
            + where
            + " ORDER BY d.id, c.ordinal"
        )
    ).all()
    for _, group in itertools.groupby(chunks, key=lambda row: row[2]):  # a document's chunks in order
        rows = list(group)
        if only_missing:  # one of the two may be there: write both afresh
            for chunk_id, *_ in rows:
                span = {"lo": chunk_id * PASSAGES_PER_CHUNK, "hi": (chunk_id + 1) * PASSAGES_PER_CHUNK}
                conn.execute(text("DELETE FROM passage_fts WHERE rowid >= :lo AND rowid < :hi"), span)
                conn.execute(text("DELETE FROM passage_stems WHERE id >= :lo AND id < :hi"), span)
        _, _, _, name, head = rows[0]
        index_chunks(conn, title_of(name, head or ""), [(row[0], row[1]) for row in rows], stemmer)
    return len(chunks)


def create_or_migrate(conn: Connection, stemmer: Stemmer) -> None:
    version = int(conn.execute(text("PRAGMA user_version")).scalar() or 0)
    if version < SCHEMA_VERSION:
        for statement in _OLD_SCHEMA:
            conn.execute(text(statement))
    for statement in DDL:
        conn.execute(text(statement))
    if version < SCHEMA_VERSION:
        chunks = int(conn.execute(text("SELECT count(*) FROM chunks")).scalar() or 0)
        if chunks:  # minutes for a large index (147 s at 100k chunks on a 16-core box): say why it waits
            logger.warning("rebuilding the keyword index of %d chunks for this docqa version (once)", chunks)
        conn.execute(text("DELETE FROM passage_fts"))
        conn.execute(text("DELETE FROM passage_stems"))
        reindex_all(conn, stemmer)
        conn.execute(text(f"PRAGMA user_version = {SCHEMA_VERSION}"))
