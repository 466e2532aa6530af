"""The store on SQLite: one file in the data directory, FTS5 for the keyword index, vectors in the chunk rows
(FAISS files are derived from them). docqa.store.relational holds what is the same on every database;
docqa.store.postgres.store.PostgresStore is its sibling on Postgres.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
from sqlalchemy import Engine, Executable, create_engine, event, select, text
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from docqa.core.errors import DataHomeUnusableError
from docqa.core.identity import NO_READER, DocumentReader
from docqa.store import schema
from docqa.store.keyword import lexical
from docqa.store.keyword.fts5_tables import Fts5Tables
from docqa.store.models import ChunkRow, CollectionRow, DocumentRow, SavedDocument, now
from docqa.store.relational import RelationalStore

__all__ = ["ChunkRow", "CollectionRow", "DocumentRow", "SavedDocument", "SqliteStore"]  # the models, for callers


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


def make_data_home(path: Path) -> None:
    """The folder that holds the database file, created if need be; a path where no folder can be (a file,
    /proc, no permission) is a DataHomeUnusableError naming it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataHomeUnusableError(str(path.parent), exc.strerror or str(exc)) from None


def sqlite_engine(path: Path) -> Engine:
    """The engine of a SQLite store: threads share it; each connection configured as docqa needs."""
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"check_same_thread": False, "timeout": 30},
        hide_parameters=True,  # an error's message and log hold the statement, never document text
    )
    event.listen(engine, "connect", _configure_connection)
    return engine


class SqliteStore(RelationalStore):
    """The store in one SQLite file (`path`), which threads of one process share."""

    cache_order = "rowid"  # answer_cache's column in the order entries were written (docqa.answering.cache)

    def __init__(self, path: Path, reader: DocumentReader = NO_READER) -> None:
        make_data_home(path)
        self.path = path
        self.location = str(path.parent)  # what errors name: the data directory, or a database URL (no password)
        engine = sqlite_engine(path)
        try:
            if not schema.at_head(engine):  # a new store, or one made by an older docqa: its migrations (Alembic)
                schema.upgrade(engine)
        except OperationalError as exc:  # a full disk, a read-only folder: said, not a traceback
            engine.dispose()
            raise DataHomeUnusableError(str(path.parent), str(exc.orig)) from None
        fts5 = Fts5Tables()
        self._open(engine, lambda _: fts5, reader)

    def snapshot(self) -> AbstractContextManager[Session]:
        """A transaction whose statements all see the database as it was at its first one (a search reads the
        index's totals, then its counts, then passages). SQLite's read transactions already do."""
        return self.session()

    def integrity_ok(self) -> bool:
        with self.session() as s:
            return s.execute(text("PRAGMA integrity_check")).scalar() == "ok"

    def chunk_ids(self, collection_id: int) -> np.ndarray:
        with self.session() as s:
            ids = s.scalars(
                select(ChunkRow.id)
                .join(DocumentRow)
                .where(DocumentRow.collection_id == collection_id, ChunkRow.embedding.is_not(None))
            )
            return np.fromiter(ids, dtype=np.int64)

    def embeddings(self, collection_id: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """All stored (chunk IDs, vectors) of a collection, to rebuild its FAISS index."""
        with self.session() as s:
            rows = s.execute(
                select(ChunkRow.id, ChunkRow.embedding)
                .join(DocumentRow)
                .where(DocumentRow.collection_id == collection_id, ChunkRow.embedding.is_not(None))
                .order_by(ChunkRow.id)
            ).all()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = np.zeros((len(rows), dim), dtype=np.float32)
        for i, (_, blob) in enumerate(rows):
            if blob is not None:  # the query already excludes NULLs; this narrows the type
                vecs[i] = np.frombuffer(blob, dtype=np.float32)
        return ids, vecs

    @staticmethod
    def _insert_new_collection(name: str) -> Executable:
        return sqlite_insert(CollectionRow).values(name=name, created_at=now()).on_conflict_do_nothing()

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
