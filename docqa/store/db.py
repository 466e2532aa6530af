"""SQLite metadata store (SQLAlchemy 2.x): collections, documents, chunks and their embeddings.

SQLite is the source of truth. Each document is written in one transaction together with its chunks,
their embeddings and (through triggers) their FTS5 rows, so a crash never leaves half a document.
The FAISS index is derived from the stored embeddings and can always be rebuilt from them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import (
    Engine,
    Executable,
    create_engine,
    delete,
    event,
    select,
    text,
)
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session, sessionmaker

from docqa.core.errors import CollectionNotFoundError, DocumentNotFoundError
from docqa.core.types import ChunkDraft, RetrievedChunk
from docqa.store import catalog, schema
from docqa.store.chunk_reads import ChunkReads, is_row_id
from docqa.store.keyword import index as keyword_index
from docqa.store.keyword import lexical, passages
from docqa.store.keyword.filing_choice import FilingIdentities
from docqa.store.keyword.fts5_tables import Fts5Tables
from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.keyword.ranking import DEFAULT_RANKING
from docqa.store.keyword.tables import DocumentPassages, KeywordTables
from docqa.store.keyword.term_stats import TermStats
from docqa.store.keyword.titles import DocumentTitles
from docqa.store.models import ChunkRow, CollectionRow, DocumentRow, SavedDocument, now

__all__ = ["ChunkRow", "CollectionRow", "DocumentRow", "SavedDocument", "Store"]  # the models, for callers


_FORGET_ANSWERS = [
    text("DELETE FROM answer_cache WHERE collection_id = :cid"),
    text(
        "INSERT INTO collection_generations(collection_id, generation) VALUES (:cid, 1) "
        "ON CONFLICT(collection_id) DO UPDATE SET generation = collection_generations.generation + 1"
    ),
]


def _configure_connection(dbapi_conn: sqlite3.Connection, _record: object) -> None:
    dbapi_conn.create_function("docqa_index_text", 1, lexical.index_text, deterministic=True)
    cur = dbapi_conn.cursor()
    # WAL lets readers (asks) go on while a writer (ingest) commits; busy_timeout waits instead of
    # failing with "database is locked" when two writers meet.
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def sqlite_engine(path: Path) -> Engine:
    """The engine of a SQLite store: threads share it; each connection configured as docqa needs."""
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"check_same_thread": False, "timeout": 30},
        hide_parameters=True,  # an error's message and log hold the statement, never document text
    )
    event.listen(engine, "connect", _configure_connection)
    return engine


class Store(ChunkReads):
    """All SQL lives here (the reads of chunks in docqa.store.chunk_reads). Methods open their own short
    sessions, so the store is thread-safe.

    This class is the SQLite store; docqa.store.postgres.store.PostgresStore is the same store on
    Postgres, overriding only what a database does differently (the keyword tables, where vectors
    live, how rows are locked)."""

    cache_order = "rowid"  # answer_cache's column in the order entries were written (docqa.answering.cache)

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.location = str(path.parent)  # what errors name: the data directory, or a database URL (no password)
        engine = sqlite_engine(path)
        if not schema.at_head(engine):  # a new store, or one made by an older docqa: its migrations (Alembic)
            schema.upgrade(engine)
        fts5 = Fts5Tables()
        self._open(engine, lambda _: fts5)

    def _open(self, engine: Engine, keyword_tables: Callable[[Stemmer], KeywordTables]) -> None:
        self.engine = engine
        self._stemmer = Stemmer()  # searches and writes share its memo of words' stems
        self.keyword_tables = keyword_tables(self._stemmer)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._term_stats = TermStats(self.keyword_tables, self._stemmer)
        self._titles = DocumentTitles(self.keyword_tables)
        self._filing_identities = FilingIdentities()
        self.ranking = DEFAULT_RANKING  # the keyword search's constants; benchmarks try others on one index

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

    def snapshot(self) -> AbstractContextManager[Session]:
        """A transaction whose statements all see the database as it was at its first one (a search reads the
        index's totals, then its counts, then passages). SQLite's read transactions already do."""
        return self.session()

    # --- collections -------------------------------------------------------------------------

    def collection(self, name: str, *, create: bool = False) -> CollectionRow:
        with self.session() as s:
            row = s.scalar(select(CollectionRow).where(CollectionRow.name == name))
            if row is not None:
                return row
            if not create:
                raise CollectionNotFoundError(name)
            # Two uploads may create the same new collection at once: insert-or-ignore, then read.
            s.execute(self._insert_new_collection(name))
        with self.session() as s:
            found = s.scalar(select(CollectionRow).where(CollectionRow.name == name))
            assert found is not None
            return found

    @staticmethod
    def _insert_new_collection(name: str) -> Executable:
        return sqlite_insert(CollectionRow).values(name=name, created_at=now()).on_conflict_do_nothing()

    def collection_by_id(self, collection_id: int) -> CollectionRow:
        with self.session() as s:
            return s.get_one(CollectionRow, collection_id)

    def collections(self) -> list[CollectionRow]:
        with self.session() as s:
            return list(s.scalars(select(CollectionRow).order_by(CollectionRow.name)))

    def set_embedder(self, collection_id: int, model: str, dim: int) -> None:
        with self.session() as s:
            row = s.get_one(CollectionRow, collection_id)
            row.embed_model, row.embed_dim = model, dim

    # --- documents -----------------------------------------------------------------------------

    def find_document(self, collection_id: int, source: str) -> DocumentRow | None:
        with self.session() as s:
            return s.scalar(
                select(DocumentRow).where(DocumentRow.collection_id == collection_id, DocumentRow.source == source)
            )

    def document_with_content(self, collection_id: int, sha256: str, other_than: str) -> DocumentRow | None:
        """A ready document of the collection with these very bytes, stored under another source (the
        same file at another path, or uploaded under another name)."""
        with self.session() as s:
            return s.scalar(
                select(DocumentRow)
                .where(
                    DocumentRow.collection_id == collection_id,
                    DocumentRow.sha256 == sha256,
                    DocumentRow.status == "ready",
                    DocumentRow.source != other_than,
                )
                .order_by(DocumentRow.id)
                .limit(1)
            )

    def documents(self, collection_id: int) -> list[DocumentRow]:
        with self.session() as s:
            stmt = select(DocumentRow).where(DocumentRow.collection_id == collection_id)
            return list(s.scalars(stmt.order_by(DocumentRow.id)))

    def documents_where(self, collection_id: int, where: Sequence[tuple[str, str]]) -> list[int]:
        """The ready documents whose catalog entry meets every condition (docqa.store.catalog.matches)."""
        with self.session() as s:
            rows = s.execute(
                select(DocumentRow.id, DocumentRow.catalog).where(
                    DocumentRow.collection_id == collection_id, DocumentRow.status == "ready"
                )
            )
            return [int(i) for i, entry in rows if catalog.matches(json.loads(entry or "{}"), where)]

    def document(self, collection: CollectionRow, document_id: int) -> DocumentRow:
        if not is_row_id(document_id):
            raise DocumentNotFoundError(document_id, collection.name)
        with self.session() as s:
            row = s.get(DocumentRow, document_id)
            if row is None or row.collection_id != collection.id:
                raise DocumentNotFoundError(document_id, collection.name)
            return row

    def save_document(
        self,
        *,
        collection_id: int,
        source: str,
        name: str,
        sha256: str,
        size_bytes: int,
        pages: int,
        warnings: Sequence[str],
        chunks: Sequence[ChunkDraft],
        embeddings: np.ndarray | None,
        recipe: str | None = None,
        ocr_pages: Sequence[int] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> SavedDocument:
        """Insert or replace a document and all its chunks in one transaction; its catalog entry is read
        from its name and head, with the uploader's `metadata` over it (docqa.store.catalog)."""
        if embeddings is not None and len(embeddings) != len(chunks):
            raise ValueError("one embedding per chunk expected")
        with self.session() as s:
            doc = s.scalar(
                select(DocumentRow).where(DocumentRow.collection_id == collection_id, DocumentRow.source == source)
            )
            removed: list[int] = []
            self._lock_for_writing(s)
            if doc is None:
                doc = DocumentRow(collection_id=collection_id, source=source)
                s.add(doc)
            else:
                removed = list(s.scalars(select(ChunkRow.id).where(ChunkRow.document_id == doc.id)))
                self.keyword_tables.forget(s, doc.id)
                s.execute(delete(ChunkRow).where(ChunkRow.document_id == doc.id))
            doc.name, doc.sha256, doc.size_bytes, doc.pages = name, sha256, size_bytes, pages
            doc.status, doc.error, doc.warnings = "ready", None, json.dumps(list(warnings))
            doc.n_chunks, doc.recipe = len(chunks), recipe
            doc.ocr_pages = json.dumps(list(ocr_pages)) if ocr_pages else None
            doc.n_tokens = sum(c.n_tokens for c in chunks)
            read = catalog.read_catalog(name, chunks[0].text if chunks else "")
            doc.catalog = json.dumps(catalog.merged(read, metadata), ensure_ascii=False)
            s.flush()
            rows = [
                ChunkRow(
                    document_id=doc.id,
                    ordinal=c.ordinal,
                    text=c.text,
                    first_page=c.first_page,
                    last_page=c.last_page,
                    char_start=c.char_start,
                    char_end=c.char_end,
                    n_tokens=c.n_tokens,
                    page_breaks=json.dumps(c.page_breaks),
                    embedding=self._embedding_column(embeddings, i),
                )
                for i, c in enumerate(chunks)
            ]
            s.add_all(rows)
            s.flush()
            if rows:
                title = passages.title_of(name, chunks[0].text)
                cut = passages.passages_of([(r.id, r.text) for r in rows])
                self.keyword_tables.write(s, DocumentPassages(doc.id, collection_id, title, cut), self._stemmer)
                self._write_vectors(s, collection_id, [r.id for r in rows], embeddings)
            self._forget_answers(s, collection_id)
            return SavedDocument(doc.id, [r.id for r in rows], removed)

    def set_catalog_fields(self, document_id: int, metadata: Mapping[str, Any]) -> None:
        """The uploader's fields over a stored document's entry (an unchanged file uploaded again with them)."""
        with self.session() as s:
            doc = s.get(DocumentRow, document_id)
            if doc is None:
                return
            entry = {k: v for k, v in json.loads(doc.catalog or "{}").items() if k != "user_fields"}
            doc.catalog = json.dumps(catalog.merged(entry, metadata), ensure_ascii=False)

    def _lock_for_writing(self, session: Session) -> None:
        """SQLite has one writer at a time already: a document's chunk IDs are one range."""

    @staticmethod
    def _embedding_column(embeddings: np.ndarray | None, i: int) -> bytes | None:
        """What a chunk row keeps of its embedding: in SQLite, the vector itself (FAISS is rebuilt from it)."""
        return None if embeddings is None else embeddings[i].astype(np.float32).tobytes()

    def _write_vectors(
        self, session: Session, collection_id: int, chunk_ids: list[int], embeddings: np.ndarray | None
    ) -> None:
        """Vectors kept outside the chunk rows: none in SQLite (FAISS files are written after the commit)."""

    def record_failure(
        self, *, collection_id: int, source: str, name: str, sha256: str, size_bytes: int, error: str
    ) -> int:
        """Record a file that could not be ingested. A previous good version is kept as it was."""
        with self.session() as s:
            doc = s.scalar(
                select(DocumentRow).where(DocumentRow.collection_id == collection_id, DocumentRow.source == source)
            )
            if doc is not None and doc.status == "ready":
                return doc.id
            if doc is None:
                doc = DocumentRow(collection_id=collection_id, source=source, pages=0, n_chunks=0)
                s.add(doc)
            doc.name, doc.sha256, doc.size_bytes = name, sha256, size_bytes
            doc.status, doc.error = "failed", error
            s.flush()
            return doc.id

    def delete_document(self, collection: CollectionRow, document_id: int) -> list[int]:
        """Delete a document and its chunks; returns the chunk IDs to drop from the vector index."""
        if not is_row_id(document_id):
            raise DocumentNotFoundError(document_id, collection.name)
        with self.session() as s:
            doc = s.get(DocumentRow, document_id)
            if doc is None or doc.collection_id != collection.id:
                raise DocumentNotFoundError(document_id, collection.name)
            ids = list(s.scalars(select(ChunkRow.id).where(ChunkRow.document_id == document_id)))
            self._lock_for_writing(s)
            self.keyword_tables.forget(s, document_id)
            s.execute(delete(ChunkRow).where(ChunkRow.document_id == document_id))
            s.delete(doc)
            self._forget_answers(s, collection.id)
            return ids

    @staticmethod
    def _forget_answers(session: Session, collection_id: int) -> None:
        """In the transaction that changes a collection's documents: its cached answers go, its generation
        goes up."""
        for statement in _FORGET_ANSWERS:
            session.execute(statement, {"cid": collection_id})

    def generation(self, collection_id: int) -> int:
        """How many times the collection's documents have changed (since this table came to be)."""
        with self.session() as s:
            found = s.execute(
                text("SELECT generation FROM collection_generations WHERE collection_id = :cid"), {"cid": collection_id}
            ).scalar()
        return int(found or 0)

    # --- chunks --------------------------------------------------------------------------------

    def best_passage(self, question: str, chunk: RetrievedChunk) -> int | None:
        """The chunk's passage (docqa.store.keyword.passages.split_passages order) the question matches best."""
        with self.snapshot() as s:
            filing = self._filing_identities.is_filing(chunk.document_id)  # as the last search read it
            return keyword_index.best_passage(
                s, self._term_stats, question, chunk.chunk_id, chunk.document_id, filing, self.ranking
            )

    def bm25(
        self, collection_id: int, question: str, limit: int, document_id: int | None = None
    ) -> list[tuple[int, float]]:
        """(chunk ID, BM25 score, higher is better) for a question, filtered to one collection."""
        with self.snapshot() as s:
            return keyword_index.search(
                s,
                collection_id,
                question,
                limit,
                document_id,
                self._term_stats,
                self._titles,
                self._filing_identities,
                self.ranking,
            )

    def integrity_ok(self) -> bool:
        with self.session() as s:
            return s.execute(text("PRAGMA integrity_check")).scalar() == "ok"
