"""Documents written straight into a Store (no reader, no chunker) for the store and keyword tests."""

from __future__ import annotations

import numpy as np

from docqa.core.types import ChunkDraft
from docqa.store.db import SavedDocument, Store


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
