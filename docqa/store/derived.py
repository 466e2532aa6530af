"""Derived data: what docqa's rules read from a document's stored text (its passages' headings in the keyword
index, its catalog entry, as the document profiles read it), rebuilt from that text, not migrated.

Each document records the version of the rules it was read with (documents.derived: the keyword index's
heading rules and the profiles' names and versions). A document whose version is not the running docqa's is
stale; `docqa reindex` reads it again, one document a transaction (so a run stopped halfway resumes where it
stopped, and a search meanwhile sees each document whole, old or new). A schema migration changes tables only.
"""

from __future__ import annotations

import json

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from docqa.core.identity import DocumentReader
from docqa.store import catalog
from docqa.store.keyword import passages
from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.keyword.tables import KeywordTables
from docqa.store.models import ChunkRow, DocumentRow

# The version of the rules the keyword index reads a passage's headings with (docqa.store.keyword.passage_stems);
# raised when they read a heading differently. History: docqa.store.keyword.fts5_tables, SCHEMA_VERSION's note.
HEADING_RULES = 11


def derived_tag(reader: DocumentReader) -> str:
    """The version a document read now is recorded with."""
    return f"headings {HEADING_RULES}; profiles {reader.version_tag}"[:200]


def stale_documents(session: Session, tag: str, collection_id: int | None = None) -> list[int]:
    """The ready documents read with other rules than `tag`'s (or before versions were recorded), oldest first."""
    query = select(DocumentRow.id).where(
        DocumentRow.status == "ready", or_(DocumentRow.derived.is_(None), DocumentRow.derived != tag)
    )
    if collection_id is not None:
        query = query.where(DocumentRow.collection_id == collection_id)
    return list(session.scalars(query.order_by(DocumentRow.id)))


def rederive(
    session: Session, document_id: int, tables: KeywordTables, stemmer: Stemmer, reader: DocumentReader, tag: str
) -> DocumentRow | None:
    """Reads the document's derived data again from its stored chunks: its passages and headings in the keyword
    index, and its catalog entry (the uploader's own fields kept over it). None where it is gone or not ready."""
    doc = session.get(DocumentRow, document_id)
    if doc is None or doc.status != "ready":
        return None
    chunks = session.execute(
        select(ChunkRow.id, ChunkRow.text).where(ChunkRow.document_id == document_id).order_by(ChunkRow.ordinal)
    ).all()
    if chunks:
        cut = [(int(chunk_id), text) for chunk_id, text in chunks]
        tables.replace(
            session, passages.document_passages(doc.id, doc.collection_id, doc.name, cut[0][1], cut), stemmer
        )
    old = json.loads(doc.catalog or "{}")
    given = {key: old[key] for key in old.get("user_fields", []) if key in old}
    # a title the file itself declared (a PDF's metadata) is not kept apart from the entry: the one read stays
    declared = old.get("title") if old.get("kind") == "document" and "title" not in given else None
    texts = [text for _, text in chunks]
    read = catalog.read_catalog(doc.name, texts[0] if texts else "", reader, texts, declared_title=declared)
    doc.catalog = json.dumps(catalog.merged(read, given or None), ensure_ascii=False)
    doc.derived = tag
    return doc
