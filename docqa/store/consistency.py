"""Opening each collection's FAISS index and keeping it in agreement with SQLite.

On open, the FAISS IDs are compared with the chunk rows that carry an embedding. A mismatch (a crash
between the SQLite commit and the next index save, a truncated or foreign file) is never served:
with auto-repair on, the index is rebuilt from the embeddings stored in SQLite; otherwise opening
fails with IndexInconsistentError naming the problem.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from docqa.core.errors import IndexInconsistentError
from docqa.store.file_lock import file_lock
from docqa.store.models import CollectionRow
from docqa.store.protocol import Store
from docqa.store.vectors import FaissIndex, IndexFileError

logger = logging.getLogger(__name__)


@dataclass
class ConsistencyReport:
    collection: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def compare_ids(faiss_ids: np.ndarray, sqlite_ids: np.ndarray) -> list[str]:
    """Human-readable differences between the IDs in FAISS and the chunk rows in SQLite."""
    problems = []
    only_faiss = np.setdiff1d(faiss_ids, sqlite_ids)
    only_sqlite = np.setdiff1d(sqlite_ids, faiss_ids)
    if len(only_faiss):
        problems.append(f"{len(only_faiss)} vectors in FAISS have no chunk row (e.g. id {only_faiss[0]})")
    if len(only_sqlite):
        problems.append(f"{len(only_sqlite)} chunk rows have no FAISS vector (e.g. id {only_sqlite[0]})")
    if len(faiss_ids) != len(np.unique(faiss_ids)):
        problems.append("FAISS holds duplicate IDs")
    return problems


class VectorIndexes:
    """The open FAISS index of every collection, verified on first use."""

    def __init__(self, store: Store, vectors_dir: Path, auto_repair: bool) -> None:
        self._store = store
        self._dir = vectors_dir
        self._auto_repair = auto_repair
        self._open: dict[int, FaissIndex] = {}
        self._rows: dict[int, CollectionRow] = {}
        self._lock = threading.Lock()

    def path(self, collection: CollectionRow) -> Path:
        return self._dir / f"collection-{collection.id}.faiss"

    def get(self, collection: CollectionRow) -> FaissIndex | None:
        """The collection's index, or None while it has no embedding model (BM25-only)."""
        if collection.embed_dim is None:
            return None
        with self._lock:
            index = self._open.get(collection.id)
            if index is None:
                index = self._open_verified(collection, collection.embed_dim)
                self._open[collection.id] = index
            self._rows[collection.id] = collection
            return index

    def create(self, collection: CollectionRow, dim: int) -> FaissIndex:
        with self._lock:
            index = FaissIndex(self.path(collection), dim)
            self._open[collection.id] = index
            self._rows[collection.id] = collection
            return index

    def drop(self, collection: CollectionRow) -> None:
        """Closed and its file removed: SQLite gives a later collection the ID of a deleted last one, which
        would otherwise open this file."""
        with self._lock:
            self._open.pop(collection.id, None)
            self._rows.pop(collection.id, None)
        self.path(collection).unlink(missing_ok=True)

    def check(self, collection: CollectionRow) -> ConsistencyReport:
        """Compare the file on disk (not the in-memory index) with SQLite."""
        report = ConsistencyReport(collection.name)
        if collection.embed_dim is None:
            return report
        try:
            on_disk = FaissIndex.load(self.path(collection), collection.embed_dim)
        except IndexFileError as exc:
            sqlite_ids = self._store.chunk_ids(collection.id)
            if len(sqlite_ids):
                report.problems.append(str(exc))
            return report
        report.problems.extend(compare_ids(on_disk.ids(), self._store.chunk_ids(collection.id)))
        return report

    def rebuild(self, collection: CollectionRow) -> FaissIndex:
        assert collection.embed_dim is not None
        index = self._build_from_store(collection, collection.embed_dim)
        with self._lock:
            self._open[collection.id] = index
            self._rows[collection.id] = collection
        return index

    def _build_from_store(self, collection: CollectionRow, dim: int) -> FaissIndex:
        ids, vectors = self._store.embeddings(collection.id, dim)
        index = FaissIndex(self.path(collection), dim)
        index.add(ids, vectors)
        index.save()
        logger.warning(
            "rebuilt the vector index of collection '%s' from %d stored embeddings", collection.name, len(ids)
        )
        return index

    def save(self, collection: CollectionRow) -> None:
        """Write the collection's index, under a lock file shared with the other processes of this data
        home. If one of them wrote the file since this process read it (the CLI ingesting while the server
        answers), this process's copy lacks its vectors and would overwrite them: the index is rebuilt from
        SQLite's embeddings instead, which hold both processes' committed documents."""
        with self._lock:
            index = self._open.get(collection.id)
        if index is None:
            return
        with file_lock(self.path(collection).with_suffix(".lock")):
            if not index.changed_on_disk():
                index.save()
                return
            assert collection.embed_dim is not None
            ids, vectors = self._store.embeddings(collection.id, collection.embed_dim)
            merged = FaissIndex(self.path(collection), collection.embed_dim)
            merged.add(ids, vectors)
            merged.save()
        with self._lock:
            self._open[collection.id] = merged
        logger.info(
            "the vector index of collection '%s' was written by another process: rebuilt from SQLite (%d vectors)",
            collection.name,
            len(ids),
        )

    def save_all(self) -> None:
        with self._lock:
            rows = [self._rows[c] for c in self._open if c in self._rows]
        for collection in rows:
            self.save(collection)

    def _open_verified(self, collection: CollectionRow, dim: int) -> FaissIndex:
        sqlite_ids = self._store.chunk_ids(collection.id)
        try:
            index = FaissIndex.load(self.path(collection), dim)
            problems = compare_ids(index.ids(), sqlite_ids)
        except IndexFileError as exc:
            if len(sqlite_ids) == 0:
                return FaissIndex(self.path(collection), dim)
            problems = [str(exc)]
        if not problems:
            return index
        message = f"vector index of collection '{collection.name}' disagrees with SQLite: " + "; ".join(problems)
        if not self._auto_repair:
            raise IndexInconsistentError(message + ". Run `docqa check --repair` to rebuild it.")
        logger.warning("%s; rebuilding it from stored embeddings", message)
        return self._build_from_store(collection, dim)
