"""Documents written straight into a Store (no reader, no chunker) for the store and keyword tests."""

from __future__ import annotations

import numpy as np

from docqa.core.types import ChunkDraft
from docqa.profiles.registry import ProfileSet
from docqa.retrieval import understanding
from docqa.store.models import SavedDocument
from docqa.store.protocol import Store
from tests.support.profiles import PROFILES


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


def bm25(
    store: Store,
    cid: int,
    question: str,
    limit: int,
    document_id: int | None = None,
    profiles: ProfileSet = PROFILES,
) -> list[tuple[int, float]]:
    """The store's keyword search for a question, read as retrieval reads it (docqa.retrieval.understanding),
    with `profiles` (by default every built-in one)."""
    query = understanding.understand(question, profiles, store.document_identities(cid))
    return store.bm25(cid, query, limit, document_id)
