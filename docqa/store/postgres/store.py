"""The store on Postgres (DOCQA_DATABASE_URL): the SQLite store's sibling (docqa.store.db.SqliteStore), with
the same tables and methods (docqa.store.relational), on a database that several API processes and ingest
workers on several machines share.

Only what differs is here. The keyword index is docqa.store.postgres.keyword_tables; vectors live in
pgvector (`chunk_vectors`, written in the document's transaction, so there is no index file to heal);
a document's write holds a transaction-scoped advisory lock, so its chunk IDs are one range (the
keyword search relies on it, as SQLite's single writer gives it) and the index's counts are updated
by one writer at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from sqlalchemy import Executable, create_engine, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from docqa.core.errors import DatabaseUnavailableError, SchemaOutdatedError
from docqa.core.identity import NO_READER, DocumentReader
from docqa.store import schema
from docqa.store.models import CollectionRow, now
from docqa.store.postgres.keyword_tables import PostgresKeywordTables
from docqa.store.relational import RelationalStore

_WRITE_LOCK = 7_410_000_002  # pg_advisory_xact_lock key held while a document's rows are written
CONNECT_TIMEOUT_S = 10  # an unreachable host fails in this time, not the system's TCP timeout (minutes)


def vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


class PostgresStore(RelationalStore):
    """The store in a Postgres database that API processes and workers on several machines share."""

    cache_order = "id"

    def __init__(self, url: str, *, migrate: bool = True, reader: DocumentReader = NO_READER) -> None:
        engine = create_engine(
            url,
            pool_pre_ping=True,
            pool_size=10,
            max_overflow=20,
            hide_parameters=True,
            connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
        )
        self.location = engine.url.render_as_string(hide_password=True)
        try:
            if migrate:
                schema.upgrade(engine)
            elif not schema.at_head(engine):
                raise SchemaOutdatedError(self.location, schema.current(engine), schema.HEADS["postgresql"])
        except OperationalError as exc:
            engine.dispose()
            raise DatabaseUnavailableError.said_by(self.location, exc.orig) from None
        self._open(engine, PostgresKeywordTables, reader)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction; the database gone (restarted, unreachable) is DatabaseUnavailableError, named."""
        try:
            with super().session() as s:
                yield s
        except OperationalError as exc:
            raise DatabaseUnavailableError.said_by(self.location, exc.orig) from None

    @contextmanager
    def snapshot(self) -> Iterator[Session]:
        """REPEATABLE READ: Postgres's default (READ COMMITTED) gives each statement its own snapshot, so a
        document committed during a search could count a term in more passages than the totals it read."""
        with self.session() as s:
            s.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            yield s

    @staticmethod
    def _insert_new_collection(name: str) -> Executable:
        return pg_insert(CollectionRow).values(name=name, created_at=now()).on_conflict_do_nothing()

    def _lock_for_writing(self, session: Session) -> None:
        session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _WRITE_LOCK})

    @staticmethod
    def _embedding_column(embeddings: np.ndarray | None, i: int) -> bytes | None:
        return None  # the vector is in chunk_vectors

    def _write_vectors(
        self, session: Session, collection_id: int, chunk_ids: list[int], embeddings: np.ndarray | None
    ) -> None:
        if embeddings is None or not chunk_ids:
            return
        session.execute(
            text(
                "INSERT INTO chunk_vectors(chunk_id, collection_id, embedding) VALUES (:id, :cid, CAST(:v AS halfvec))"
            ),
            [
                {"id": chunk_id, "cid": collection_id, "v": vector_literal(embeddings[i])}
                for i, chunk_id in enumerate(chunk_ids)
            ],
        )

    def set_embedder(self, collection_id: int, model: str, dim: int) -> None:
        """Also makes the collection's HNSW index (cosine on halfvec), so a search filters by collection
        inside the index instead of after its top-k."""
        super().set_embedder(collection_id, model, dim)
        with self.session() as s:
            s.execute(
                text(
                    f"CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw_{int(collection_id)} ON chunk_vectors "
                    f"USING hnsw ((embedding::halfvec({int(dim)})) halfvec_cosine_ops) "
                    f"WHERE collection_id = {int(collection_id)}"
                )
            )

    def chunk_ids(self, collection_id: int) -> np.ndarray:
        with self.session() as s:
            ids = s.scalars(text("SELECT chunk_id FROM chunk_vectors WHERE collection_id = :c"), {"c": collection_id})
            return np.fromiter(ids, dtype=np.int64)

    def embeddings(self, collection_id: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
        with self.session() as s:
            rows = s.execute(
                text("SELECT chunk_id, embedding::text FROM chunk_vectors WHERE collection_id = :c ORDER BY chunk_id"),
                {"c": collection_id},
            ).all()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = np.zeros((len(rows), dim), dtype=np.float32)
        for i, (_, literal) in enumerate(rows):
            vecs[i] = np.array(literal.strip("[]").split(","), dtype=np.float32)
        return ids, vecs

    def integrity_ok(self) -> bool:
        """Postgres checks its pages itself; here, that the database answers and has docqa's schema."""
        return schema.at_head(self.engine)
