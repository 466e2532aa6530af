"""Conversations kept on the server, per collection and per API key (a key sees only its own, in the
collections it is granted: docqa.api.deps.collection_reader): list (with search), create, read, rename, delete,
export as JSON or Markdown, ask in one (its earlier questions carried), and feedback on an answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import PlainTextResponse, StreamingResponse
from pydantic import BaseModel, BeforeValidator, Field

from docqa.api.deps import CallerDep, QADep, StateDep
from docqa.api.routes.ask import AskBody, answered
from docqa.service.conversations import MESSAGES_PAGE

router = APIRouter(prefix="/v1/collections/{name}/conversations", tags=["conversations"])


class TitleBody(BaseModel):
    title: str = Field(default="", max_length=200, description="Empty: titled by its first question.")


class MessageBody(AskBody):
    """A question asked in the conversation: /v1/ask's fields (its collection is the path's)."""


def _no_bool(value: object) -> object:
    """JSON's true is Python's 1: a rating of true was kept as a good one."""
    if isinstance(value, bool):
        raise ValueError("1 or -1, not true or false")
    return value


class FeedbackBody(BaseModel):
    rating: Annotated[Literal[1, -1], BeforeValidator(_no_bool)] = Field(description="1: a good answer; -1: a bad one.")
    note: str | None = Field(default=None, max_length=2000)


@router.get("", summary="The caller's conversations in a collection, the latest first")
def list_conversations(name: str, qa: QADep, grant: CallerDep, q: str = "") -> dict[str, Any]:
    owner = qa.conversations.owner(name, grant.owner)
    return {"conversations": qa.conversations.find(owner, q)}


@router.post("", status_code=201, summary="Start a conversation")
def create(name: str, body: TitleBody, qa: QADep, grant: CallerDep) -> dict[str, Any]:
    return qa.conversations.create(qa.conversations.owner(name, grant.owner), body.title)


@router.get("/{conversation_id}", summary="A conversation with its messages, answers and citations")
def read(
    name: str,
    conversation_id: int,
    qa: QADep,
    grant: CallerDep,
    before: Annotated[
        int | None, Query(ge=1, description="Only messages before this message ID (the page before).")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="Most messages returned: the latest ones.")] = MESSAGES_PAGE,
) -> dict[str, Any]:
    """`messages` is the latest `limit` (oldest first); `earlier` true: ask again with `before` the first's ID."""
    return qa.conversations.get(qa.conversations.owner(name, grant.owner), conversation_id, before, limit)


@router.patch("/{conversation_id}", summary="Rename a conversation")
def rename(name: str, conversation_id: int, body: TitleBody, qa: QADep, grant: CallerDep) -> dict[str, Any]:
    owner = qa.conversations.owner(name, grant.owner)
    return qa.conversations.rename(owner, conversation_id, body.title)


@router.delete("/{conversation_id}", status_code=204, summary="Delete a conversation")
def delete(name: str, conversation_id: int, qa: QADep, grant: CallerDep) -> Response:
    qa.conversations.delete(qa.conversations.owner(name, grant.owner), conversation_id)
    return Response(status_code=204)


@router.get("/{conversation_id}/export", summary="A conversation as JSON or Markdown", response_model=None)
def export(
    name: str, conversation_id: int, qa: QADep, grant: CallerDep, format: Literal["json", "markdown"] = "json"
) -> dict[str, Any] | PlainTextResponse:
    owner = qa.conversations.owner(name, grant.owner)
    exported = qa.conversations.export(owner, conversation_id, format)
    if isinstance(exported, str):
        return PlainTextResponse(exported, media_type="text/markdown; charset=utf-8")
    return exported


@router.post(
    "/{conversation_id}/messages",
    summary="Ask in a conversation: the answer (JSON, or Server-Sent Events with stream) is kept in it",
    response_model=None,
)
async def ask(
    name: str, conversation_id: int, body: MessageBody, qa: QADep, state: StateDep, grant: CallerDep, request: Request
) -> StreamingResponse | dict[str, Any]:
    owner = qa.conversations.owner(name, grant.owner)
    asked = body.model_copy(update={"collection": name}).request(grant.owner)

    async def answer() -> dict[str, Any]:
        return await qa.conversations.ask(owner, conversation_id, asked, request.is_disconnected)

    return await answered(
        state, grant, body.stream, answer, lambda: qa.conversations.stream(owner, conversation_id, asked)
    )


@router.post("/{conversation_id}/messages/{message_id}/feedback", status_code=204, summary="Rate an answer")
def feedback(
    name: str, conversation_id: int, message_id: int, body: FeedbackBody, qa: QADep, grant: CallerDep
) -> Response:
    owner = qa.conversations.owner(name, grant.owner)
    qa.conversations.feedback(owner, conversation_id, message_id, body.rating, body.note)
    return Response(status_code=204)
