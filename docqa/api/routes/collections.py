"""Collections and the text behind a citation (what the web page needs besides upload and ask)."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from docqa.api.deps import CallerDep, QADep, readable
from docqa.core.errors import NotPermittedError
from docqa.service.profiles import choose_profiles, collection_profiles

router = APIRouter(prefix="/v1/collections", tags=["collections"])


@router.get("", summary="Collections with their document and chunk counts")
def list_collections(qa: QADep, grant: CallerDep) -> dict[str, Any]:
    """The collections the caller's key is granted (every one for an admin key, or without keys)."""
    granted = [c for c in qa.collections() if grant.can_read(c.name)]
    return {"collections": [{"name": c.name, "documents": c.ready, "chunks": c.chunks} for c in granted]}


class NewCollection(BaseModel):
    name: str = Field(
        min_length=1, max_length=64, description="1-64 letters, digits, '.', '_' or '-'.", examples=["contracts"]
    )


@router.post("", status_code=201, summary="Create an empty collection (200 when it exists already)")
def create_collection(body: NewCollection, qa: QADep, grant: CallerDep, response: Response) -> dict[str, Any]:
    readable(grant, body.name)  # a key makes only collections it was granted (their names), and reads them
    if not grant.can_write(body.name):
        raise NotPermittedError(body.name, "create collections")
    existed = {c.name: c for c in qa.collections()}
    row = qa.collection(body.name, create=True)  # the name is checked here (400 for a bad one)
    found = existed.get(row.name)
    if found is not None:
        response.status_code = 200
        return {"name": found.name, "documents": found.ready, "chunks": found.chunks}
    return {"name": row.name, "documents": 0, "chunks": 0}


@router.delete("/{name}", summary="Delete a collection: its documents, conversations and cached answers")
def delete_collection(name: str, qa: QADep, grant: CallerDep) -> dict[str, Any]:
    """Every document of the collection (chunks, vectors, kept uploads), its conversations, cached answers and
    queued uploads, then the collection. A key needs write access to it."""
    readable(grant, name)
    if not grant.can_write(name):
        raise NotPermittedError(name, "delete collections")
    return {"name": name, "documents_deleted": qa.delete_collection(name)}


class ProfilesChoice(BaseModel):
    profiles: str = Field(
        max_length=200,
        description="Names by comma among the profiles switched on (GET /v1/collections/{name}/profiles lists "
        "them), 'none' for the generic core alone, or 'auto' for the deployment's (DOCQA_RETRIEVAL_PROFILES).",
        examples=["contracts", "sec,csrc", "auto"],
    )


@router.get("/{name}/profiles", summary="The document profiles a collection's questions are read with")
def get_profiles(name: str, qa: QADep, grant: CallerDep) -> dict[str, Any]:
    readable(grant, name)
    return dataclasses.asdict(collection_profiles(qa, name))


@router.put("/{name}/profiles", summary="Choose the document profiles a collection's questions are read with")
def put_profiles(name: str, body: ProfilesChoice, qa: QADep, grant: CallerDep) -> dict[str, Any]:
    """Among the profiles switched on for the deployment; the collection's cached answers go. A key needs write
    access to the collection."""
    readable(grant, name)
    if not grant.can_write(name):
        raise NotPermittedError(name, "choose profiles")
    return dataclasses.asdict(choose_profiles(qa, name, body.profiles))


@router.get("/{name}/chunks/{chunk_id}", summary="The text of one chunk, as a citation points at it")
def get_chunk(name: str, chunk_id: int, qa: QADep, grant: CallerDep) -> dict[str, Any]:
    readable(grant, name)
    chunk = qa.chunk(chunk_id, name)
    return {
        "chunk_id": chunk.chunk_id,
        "document": chunk.document_name,
        "document_id": chunk.document_id,
        "pages": [chunk.first_page, chunk.last_page],
        "page_breaks": [list(b) for b in chunk.page_breaks],
        "text": chunk.text,
    }
