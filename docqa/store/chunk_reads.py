"""Reading chunks and counting rows: the store's queries that only read (docqa.store.relational.RelationalStore
inherits them).

Generic SQLAlchemy, the same on SQLite and Postgres; where the vectors are read from differs by database
(each store's chunk_ids and embeddings).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from docqa.core.types import RetrievedChunk
from docqa.store.models import ChunkRow, DocumentRow

MAX_ROW_ID = 2**63 - 1  # SQLite's INTEGER: a larger ID can name no row (and overflows the driver)


def is_row_id(value: int) -> bool:
    return 0 < value <= MAX_ROW_ID


class ChunkReads:
    def session(self) -> AbstractContextManager[Session]:
        raise NotImplementedError

    def document_counts(self) -> list[tuple[str, str, int]]:
        """(collection name, document status, documents) for every collection that has documents."""
        with self.session() as s:
            rows = s.execute(
                text(
                    "SELECT c.name, d.status, count(d.id) FROM collections c "
                    "JOIN documents d ON d.collection_id = c.id GROUP BY c.name, d.status"
                )
            )
            return [(str(name), str(status), int(n)) for name, status, n in rows]

    def chunk_counts(self) -> dict[str, int]:
        """Chunks per collection name (collections without chunks are left out)."""
        with self.session() as s:
            rows = s.execute(
                text(
                    "SELECT c.name, count(k.id) FROM collections c JOIN documents d ON d.collection_id = c.id "
                    "JOIN chunks k ON k.document_id = d.id GROUP BY c.name"
                )
            )
            return {str(name): int(n) for name, n in rows}

    def count_chunks(self, collection_id: int) -> int:
        with self.session() as s:
            return int(
                s.execute(
                    text(
                        "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id "
                        "WHERE d.collection_id = :cid"
                    ),
                    {"cid": collection_id},
                ).scalar()
                or 0
            )

    def chunk_ids_of_document(self, document_id: int) -> np.ndarray:
        with self.session() as s:
            ids = s.scalars(select(ChunkRow.id).where(ChunkRow.document_id == document_id))
            return np.fromiter(ids, dtype=np.int64)

    def fetch_chunks(self, ids: Sequence[int]) -> dict[int, RetrievedChunk]:
        """Chunk rows with their document names, keyed by ID (score left at 0)."""
        ids = [i for i in ids if is_row_id(i)]
        if not ids:
            return {}
        with self.session() as s:
            rows = s.execute(
                select(ChunkRow, DocumentRow.name, DocumentRow.ocr_pages)
                .join(DocumentRow)
                .where(ChunkRow.id.in_(list(ids)))
            ).all()
        return {
            c.id: RetrievedChunk(
                chunk_id=c.id,
                document_id=c.document_id,
                document_name=name,
                ordinal=c.ordinal,
                text=c.text,
                first_page=c.first_page,
                last_page=c.last_page,
                score=0.0,
                page_breaks=tuple((int(o), int(p)) for o, p in json.loads(c.page_breaks or "[]")),
                ocr_pages=tuple(p for p in json.loads(ocr or "[]") if c.first_page <= p <= c.last_page),
            )
            for c, name, ocr in rows
        }

    def adjacent_chunks(self, chunk: RetrievedChunk) -> tuple[RetrievedChunk | None, RetrievedChunk | None]:
        """The chunks just before and after one in its document (None at either end)."""
        with self.session() as s:
            ids = dict(
                s.execute(
                    select(ChunkRow.ordinal, ChunkRow.id).where(
                        ChunkRow.document_id == chunk.document_id,
                        ChunkRow.ordinal.in_([chunk.ordinal - 1, chunk.ordinal + 1]),
                    )
                ).all()
            )
        found = self.fetch_chunks(list(ids.values()))
        before, after = ids.get(chunk.ordinal - 1), ids.get(chunk.ordinal + 1)
        return found.get(before) if before else None, found.get(after) if after else None
