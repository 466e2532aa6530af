"""Collections' vectors in pgvector: one table, one HNSW index per collection (docqa.store.postgres.store).

The vectors are written by the store in the document's transaction, so adding and saving here do
nothing and there is never an index to rebuild: `check` only counts chunks of an embedded collection
that have no vector (none unless rows were edited by hand).
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, BIGINT

from docqa.store.consistency import ConsistencyReport
from docqa.store.models import CollectionRow
from docqa.store.postgres.store import PostgresStore, vector_literal

# HNSW's candidate list (pgvector's default is 40). Iterative scans go on past it when the filter
# (the collection; a document's chunks) leaves fewer than k.
EF_SEARCH = 100


class PgVectorIndex:
    def __init__(self, store: PostgresStore, collection_id: int, dim: int) -> None:
        self._store = store
        self._collection = collection_id
        self._dim = dim

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Written by the store with their chunks."""

    def remove(self, ids: np.ndarray) -> None:
        """Deleted with their chunks (foreign key)."""

    def search(self, query: np.ndarray, k: int, allowed_ids: np.ndarray | None = None) -> list[tuple[int, float]]:
        vector = f"CAST(:q AS halfvec({self._dim}))"
        column = f"embedding::halfvec({self._dim})"
        params: dict[str, object] = {"q": vector_literal(query.reshape(-1)), "cid": self._collection, "k": k}
        if allowed_ids is not None:
            # One document's chunks: an exact scan of those few (the expression differs from the index's).
            statement = text(
                f"SELECT chunk_id, 1 - ({column} <=> {vector}) AS s FROM chunk_vectors "
                f"WHERE collection_id = :cid AND chunk_id = ANY(:ids) ORDER BY s DESC, chunk_id LIMIT :k"
            ).bindparams(bindparam("ids", type_=ARRAY(BIGINT)))
            params["ids"] = [int(i) for i in allowed_ids]
        else:
            statement = text(
                f"SELECT chunk_id, 1 - ({column} <=> {vector}) FROM chunk_vectors "
                f"WHERE collection_id = :cid ORDER BY {column} <=> {vector} LIMIT :k"
            )
        with self._store.session() as s:
            s.execute(text(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}"))
            s.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
            return [(int(i), float(score)) for i, score in s.execute(statement, params)]

    def ids(self) -> np.ndarray:
        return self._store.chunk_ids(self._collection)

    def __len__(self) -> int:
        with self._store.session() as s:
            found = s.execute(
                text("SELECT count(*) FROM chunk_vectors WHERE collection_id = :c"), {"c": self._collection}
            ).scalar()
        return int(found or 0)


class PgVectorIndexes:
    """docqa.store.index_protocols.VectorIndexSet on pgvector."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def get(self, collection: CollectionRow) -> PgVectorIndex | None:
        if collection.embed_dim is None:
            return None
        return PgVectorIndex(self._store, collection.id, collection.embed_dim)

    def create(self, collection: CollectionRow, dim: int) -> PgVectorIndex:
        return PgVectorIndex(self._store, collection.id, dim)

    def drop(self, collection: CollectionRow) -> None:
        """The collection's HNSW index (its vectors went with its chunks)."""
        with self._store.session() as s:
            s.execute(text(f"DROP INDEX IF EXISTS chunk_vectors_hnsw_{int(collection.id)}"))

    def check(self, collection: CollectionRow) -> ConsistencyReport:
        report = ConsistencyReport(collection.name)
        if collection.embed_dim is None:
            return report
        with self._store.session() as s:
            missing = s.execute(
                text(
                    "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.collection_id = "
                    ":cid AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)"
                ),
                {"cid": collection.id},
            ).scalar()
        if missing:
            report.problems.append(f"{missing} chunk rows have no vector; ingest their documents again")
        return report

    def rebuild(self, collection: CollectionRow) -> PgVectorIndex:
        """Nothing to rebuild: the vectors are the store's own rows."""
        assert collection.embed_dim is not None
        return PgVectorIndex(self._store, collection.id, collection.embed_dim)

    def save(self, collection: CollectionRow) -> None:
        """Committed with their documents."""

    def save_all(self) -> None:
        """Committed with their documents."""
