"""The store on a SQL database: collections, documents, chunks, their catalog entries and the keyword search,
the same on SQLite and Postgres (SQLAlchemy 2.x).

The database is the source of truth. Each document is written in one transaction together with its chunks,
their embeddings and their keyword rows, so a crash never leaves half a document; vector indexes are
derived from it and can always be rebuilt. Callers type against docqa.store.protocol.Store.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np
from sqlalchemy import Engine, Executable, delete, select, text
from sqlalchemy.orm import Session, sessionmaker

from docqa.core.errors import CollectionNotFoundError, DocumentNotFoundError
from docqa.core.identity import DocumentReader
from docqa.core.types import ChunkDraft
from docqa.store import catalog, derived
from docqa.store.chunk_reads import ChunkReads, is_row_id
from docqa.store.keyword import passages
from docqa.store.keyword.identities import DocumentIdentities
from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.keyword.ranking import DEFAULT_RANKING
from docqa.store.keyword.tables import KeywordTables
from docqa.store.keyword.term_stats import TermStats
from docqa.store.keyword.titles import DocumentTitles
from docqa.store.keyword_search import KeywordSearch
from docqa.store.models import ChunkRow, CollectionRow, DocumentRow, SavedDocument

_FORGET_ANSWERS = [
    text("DELETE FROM answer_cache WHERE collection_id = :cid"),
    text(
        "INSERT INTO collection_generations(collection_id, generation) VALUES (:cid, 1) "
        "ON CONFLICT(collection_id) DO UPDATE SET generation = collection_generations.generation + 1"
    ),
]


class RelationalStore(ChunkReads, KeywordSearch, ABC):
    """The store's SQL that is the same on every database (the reads of chunks in docqa.store.chunk_reads).
    Methods open their own short sessions, so the store is thread-safe.

    What a database does differently is the abstract methods below, implemented side by side by
    docqa.store.db.SqliteStore and docqa.store.postgres.store.PostgresStore: how a snapshot is isolated,
    how a new collection is inserted, how a document's write is serialised, where vectors live, how
    integrity is checked. The keyword tables each passes to _open differ too."""

    cache_order: str  # answer_cache's column in the order entries were written (docqa.answering.cache)
    location: str  # what errors name: the data directory, or a database URL (no password)

    def _open(self, engine: Engine, keyword_tables: Callable[[Stemmer], KeywordTables], reader: DocumentReader) -> None:
        self.engine = engine
        self._stemmer = Stemmer()  # searches and writes share its memo of words' stems
        self.keyword_tables = keyword_tables(self._stemmer)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._term_stats = TermStats(self.keyword_tables, self._stemmer)
        self._titles = DocumentTitles(self.keyword_tables)
        self._identities = DocumentIdentities(reader)  # what the document profiles read each document as
        self.derived_tag = derived.derived_tag(reader)  # the rules documents read now are recorded with
        self.ranking = DEFAULT_RANKING  # the keyword search's constants; benchmarks try others on one index

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

    def ping(self) -> None:
        """DatabaseUnavailableError (Postgres) or another DocqaError unless the database answers a query now."""
        with self.session() as s:
            s.execute(text("SELECT 1"))

    @abstractmethod
    def snapshot(self) -> AbstractContextManager[Session]:
        """A transaction whose statements all see the database as it was at its first one (a search reads the
        index's totals, then its counts, then passages)."""

    @abstractmethod
    def integrity_ok(self) -> bool:
        """Whether the database says its data is sound."""

    @abstractmethod
    def chunk_ids(self, collection_id: int) -> np.ndarray:
        """The IDs of the collection's chunks that have a vector."""

    @abstractmethod
    def embeddings(self, collection_id: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """All stored (chunk IDs, vectors) of a collection, to rebuild a vector index from."""

    @staticmethod
    @abstractmethod
    def _insert_new_collection(name: str) -> Executable:
        """An insert of a new collection that does nothing when another writer made it first."""

    @abstractmethod
    def _lock_for_writing(self, session: Session) -> None:
        """Serialises documents' writes, so that a document's chunk IDs are one range (the keyword search
        relies on it) and the index's counts are updated by one writer at a time."""

    @staticmethod
    @abstractmethod
    def _embedding_column(embeddings: np.ndarray | None, i: int) -> bytes | None:
        """What a chunk row keeps of its embedding."""

    @abstractmethod
    def _write_vectors(
        self, session: Session, collection_id: int, chunk_ids: list[int], embeddings: np.ndarray | None
    ) -> None:
        """Vectors kept outside the chunk rows, in the document's transaction."""

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

    def drop_collection(self, collection: CollectionRow, *, unless_used: bool = False) -> bool:
        """Delete a collection that holds no document but failed files' records (delete_document took each of the
        others out of the keyword index first), with those records and what hangs on it: conversations, cached
        answers, queued jobs (ON DELETE CASCADE). Under the write lock, so no document lands in it meanwhile; where
        one did, nothing is deleted (False). unless_used: neither where a conversation was held in it (what a first
        ingest whose every file failed leaves is dropped, issue 62; a collection someone talked in is not)."""
        with self.session() as s:
            self._lock_for_writing(s)
            held = s.scalar(
                select(DocumentRow.id).where(DocumentRow.collection_id == collection.id, DocumentRow.status != "failed")
            )
            talked = (
                unless_used
                and s.execute(
                    text("SELECT 1 FROM conversations WHERE collection_id = :cid LIMIT 1"), {"cid": collection.id}
                ).first()
            )
            if held is not None or talked:
                return False
            s.execute(delete(DocumentRow).where(DocumentRow.collection_id == collection.id))
            s.execute(delete(CollectionRow).where(CollectionRow.id == collection.id))
            return True

    def collection_by_id(self, collection_id: int) -> CollectionRow:
        with self.session() as s:
            return s.get_one(CollectionRow, collection_id)

    def collections(self) -> list[CollectionRow]:
        with self.session() as s:
            return list(s.scalars(select(CollectionRow).order_by(CollectionRow.name)))

    def set_profiles(self, collection_id: int, profiles: str | None) -> None:
        """The document profiles the collection's questions are read with (None: the deployment's); its cached
        answers go, as they were found with the others."""
        with self.session() as s:
            row = s.get(CollectionRow, collection_id)
            if row is None:
                raise CollectionNotFoundError(str(collection_id))
            row.profiles = profiles
            self._forget_answers(s, collection_id)

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
            return self._twin_in(s, collection_id, sha256, other_than)

    @staticmethod
    def _twin_in(session: Session, collection_id: int, sha256: str, other_than: str) -> DocumentRow | None:
        return session.scalar(
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
        with self.session() as s:
            return self._owned_document(s, collection, document_id)

    @staticmethod
    def _owned_document(session: Session, collection: CollectionRow, document_id: int) -> DocumentRow:
        """The collection's document with this ID; DocumentNotFoundError for another collection's or none."""
        row = session.get(DocumentRow, document_id) if is_row_id(document_id) else None
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
        unique_content: bool = False,
        title: str | None = None,
    ) -> SavedDocument:
        """Insert or replace a document and all its chunks in one transaction; its catalog entry is read
        from its name and head, with the uploader's `metadata` over it (docqa.store.catalog).

        unique_content: a new source whose bytes are already a ready document of the collection is not
        written; that document comes back as `twin`. Checked under the write lock, so two workers saving
        the same file at once store it once (the ingest pipeline's earlier check cannot see a document
        another worker has not committed yet)."""
        if embeddings is not None and len(embeddings) != len(chunks):
            raise ValueError("one embedding per chunk expected")
        with self.session() as s:
            self._lock_for_writing(s)  # before reading: a concurrent writer's document is committed by now
            doc = s.scalar(
                select(DocumentRow).where(DocumentRow.collection_id == collection_id, DocumentRow.source == source)
            )
            removed: list[int] = []
            if doc is None and unique_content:
                twin = self._twin_in(s, collection_id, sha256, source)
                if twin is not None:
                    return SavedDocument(twin.id, [], [], twin=twin)
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
            head = chunks[0].text if chunks else ""
            texts = [c.text for c in chunks]
            read = catalog.read_catalog(name, head, self._identities.reader, texts, declared_title=title)
            doc.catalog = json.dumps(catalog.merged(read, metadata), ensure_ascii=False)
            doc.derived = self.derived_tag
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
                document = passages.document_passages(
                    doc.id, collection_id, name, chunks[0].text, [(r.id, r.text) for r in rows]
                )
                self.keyword_tables.write(s, document, self._stemmer)
                self._write_vectors(s, collection_id, [r.id for r in rows], embeddings)
            self._forget_answers(s, collection_id)
            return SavedDocument(doc.id, [r.id for r in rows], removed)

    def stale_documents(self, collection_id: int | None = None) -> list[int]:
        """The documents whose derived data older rules read (docqa.store.derived), oldest first."""
        with self.session() as s:
            return derived.stale_documents(s, self.derived_tag, collection_id)

    def rederive(self, document_id: int) -> bool:
        """Reads one document's derived data again, in one transaction; False where it is gone or not ready."""
        with self.session() as s:
            self._lock_for_writing(s)
            doc = derived.rederive(
                s, document_id, self.keyword_tables, self._stemmer, self._identities.reader, self.derived_tag
            )
            if doc is not None:
                self._forget_answers(s, doc.collection_id)
            return doc is not None

    def set_catalog_fields(self, document_id: int, metadata: Mapping[str, Any]) -> None:
        """The uploader's fields over a stored document's entry (an unchanged file uploaded again with them)."""
        with self.session() as s:
            doc = s.get(DocumentRow, document_id)
            if doc is None:
                return
            entry = {k: v for k, v in json.loads(doc.catalog or "{}").items() if k != "user_fields"}
            doc.catalog = json.dumps(catalog.merged(entry, metadata), ensure_ascii=False)

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
        with self.session() as s:
            doc = self._owned_document(s, collection, document_id)
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
