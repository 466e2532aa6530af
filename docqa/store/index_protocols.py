"""What callers (retrieval, ingest, the service) need of a collection's vector index, whatever keeps it:
FAISS files beside SQLite (docqa.store.consistency, docqa.store.vectors) or pgvector inside Postgres
(docqa.store.postgres.vectors)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from docqa.store.consistency import ConsistencyReport
from docqa.store.models import CollectionRow


class VectorIndex(Protocol):
    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Vectors of chunks just committed (a no-op where the store wrote them in its transaction)."""
        ...

    def remove(self, ids: np.ndarray) -> None: ...

    def search(self, query: np.ndarray, k: int, allowed_ids: np.ndarray | None = None) -> list[tuple[int, float]]:
        """(chunk ID, similarity; higher is better), best first, among allowed_ids when given."""
        ...

    def ids(self) -> np.ndarray:
        """Every chunk ID the index holds."""
        ...

    def __len__(self) -> int: ...


class VectorIndexSet(Protocol):
    def get(self, collection: CollectionRow) -> VectorIndex | None:
        """The collection's index, or None while it has no embedding model (BM25-only)."""
        ...

    def create(self, collection: CollectionRow, dim: int) -> VectorIndex: ...

    def drop(self, collection: CollectionRow) -> None:
        """A deleted collection's index: closed, and removed where it is kept apart from the store."""
        ...

    def check(self, collection: CollectionRow) -> ConsistencyReport: ...

    def rebuild(self, collection: CollectionRow) -> VectorIndex: ...

    def save(self, collection: CollectionRow) -> None: ...

    def save_all(self) -> None: ...
