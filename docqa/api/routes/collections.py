"""Collections and the text behind a citation (what the web page needs besides upload and ask)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from docqa.api.deps import QADep

router = APIRouter(prefix="/v1/collections", tags=["collections"])


@router.get("", summary="Collections with their document and chunk counts")
def list_collections(qa: QADep) -> dict[str, Any]:
    ready = {name: n for name, status, n in qa.store.document_counts() if status == "ready"}
    chunks = qa.store.chunk_counts()  # failed documents keep no chunks
    return {
        "collections": [
            {"name": c.name, "documents": ready.get(c.name, 0), "chunks": chunks.get(c.name, 0)}
            for c in qa.store.collections()
        ]
    }


@router.get("/{name}/chunks/{chunk_id}", summary="The text of one chunk, as a citation points at it")
def get_chunk(name: str, chunk_id: int, qa: QADep) -> dict[str, Any]:
    chunk = qa.chunk(chunk_id, name)
    return {
        "chunk_id": chunk.chunk_id,
        "document": chunk.document_name,
        "document_id": chunk.document_id,
        "pages": [chunk.first_page, chunk.last_page],
        "page_breaks": [list(b) for b in chunk.page_breaks],
        "text": chunk.text,
    }
