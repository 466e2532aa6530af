"""Documents written straight into a Store (no reader, no chunker) for the store and keyword tests."""

from __future__ import annotations

import numpy as np

from docqa.core.types import ChunkDraft
from docqa.retrieval.understanding import understand
from docqa.store.models import SavedDocument
from docqa.store.protocol import Store


def drafts(*texts: str) -> list[ChunkDraft]:
    return [ChunkDraft(i, t, 0, len(t), 1, 1, len(t.split())) for i, t in enumerate(texts)]


def save(
    store: Store, cid: int, name: str, texts: list[str], embeddings: np.ndarray | None, sha: str = "x"
) -> SavedDocument:
    return store.save_document(
        collection_id=cid,
        source=name,
        name=name,
        sha256=sha,
        size_bytes=1,
        pages=1,
        warnings=[],
        chunks=drafts(*texts),
        embeddings=embeddings,
    )


def bm25(store: Store, cid: int, question: str, limit: int, document_id: int | None = None) -> list[tuple[int, float]]:
    """The store's keyword search for a question, read as retrieval reads it (docqa.retrieval.understanding)."""
    return store.bm25(cid, understand(question, store.filing_identities(cid)), limit, document_id)
