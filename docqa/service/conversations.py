"""Conversations on the server (docqa.store.conversations): asking in one carries the questions before it,
and keeps the answer with its citations, reasoning and timings; listing, renaming, deleting, exporting
(JSON, Markdown) and feedback. A caller is known by the hash of its API key: a key sees only its own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

from docqa.core.events import AnswerDelta, AskEvent, CitationsEvent, DoneEvent, ReasoningDelta
from docqa.core.requests import AskRequest
from docqa.core.types import Answer
from docqa.store.conversations import Conversations, Owner
from docqa.store.models import CollectionRow
from docqa.store.protocol import Store

EARLIER_KEPT = 4  # the questions before this one that it carries (the last one steers retrieval)


class Asking(Protocol):
    """What conversations need of the service (docqa.service.facade.DocQA)."""

    store: Store

    def collection(self, name: str | None = None, *, create: bool = False) -> CollectionRow: ...

    async def aask(self, request: AskRequest, gone: Callable[[], Awaitable[bool]] | None = None) -> Answer: ...

    def astream(self, request: AskRequest) -> AsyncIterator[AskEvent]: ...


class ConversationService:
    def __init__(self, qa: Asking) -> None:
        self._qa = qa
        self.rows = Conversations(qa.store.session)

    def owner(self, collection: str | None, asker: str) -> Owner:
        """The conversations of this collection made by this caller (Grant.owner: a hash of its key, "" without
        keys); never the key itself."""
        return Owner(self._qa.collection(collection).id, asker)

    def create(self, owner: Owner, title: str = "") -> dict[str, Any]:
        return self.rows.create(owner, title)

    def find(self, owner: Owner, search: str = "") -> list[dict[str, Any]]:
        return self.rows.find(owner, search)

    def get(self, owner: Owner, conversation_id: int) -> dict[str, Any]:
        return self.rows.get(owner, conversation_id)

    def rename(self, owner: Owner, conversation_id: int, title: str) -> dict[str, Any]:
        return self.rows.rename(owner, conversation_id, title)

    def delete(self, owner: Owner, conversation_id: int) -> None:
        self.rows.delete(owner, conversation_id)

    def feedback(self, owner: Owner, conversation_id: int, message_id: int, rating: int, note: str | None) -> None:
        self.rows.feedback(owner, conversation_id, message_id, rating, note)

    def rated(self, collection: str | None) -> list[dict[str, Any]]:
        """Every rated answer of the collection, whoever asked (`docqa feedback export`)."""
        return self.rows.rated(self._qa.collection(collection).id)

    def _carried(self, owner: Owner, conversation_id: int, request: AskRequest) -> AskRequest:
        earlier = self.rows.questions(owner, conversation_id)[-EARLIER_KEPT:]
        return replace(request, earlier=tuple(earlier))

    async def ask(
        self,
        owner: Owner,
        conversation_id: int,
        request: AskRequest,
        gone: Callable[[], Awaitable[bool]] | None = None,
    ) -> dict[str, Any]:
        """The answer to a question asked in the conversation (its earlier questions carried), kept in it."""
        answer = (await self._qa.aask(self._carried(owner, conversation_id, request), gone)).as_dict()
        message_id = self.rows.add(owner, conversation_id, request.question, answer)
        return {**answer, "conversation_id": conversation_id, "message_id": message_id}

    async def stream(self, owner: Owner, conversation_id: int, request: AskRequest) -> AsyncIterator[AskEvent]:
        """The answer's events, as /v1/ask streams them; kept in the conversation when it is done."""
        carried = self._carried(owner, conversation_id, request)
        kept: dict[str, Any] = {"answer": "", "reasoning": "", "warnings": []}
        async for event in self._qa.astream(carried):
            if isinstance(event, CitationsEvent):
                kept.update(mode=event.mode, warnings=list(event.warnings))
            elif isinstance(event, AnswerDelta | ReasoningDelta):
                kept[event.kind] += event.text
            elif isinstance(event, DoneEvent):
                kept.update(event.as_dict())
                self.rows.add(owner, conversation_id, request.question, kept)
            yield event

    def export(self, owner: Owner, conversation_id: int, form: str) -> str | dict[str, Any]:
        conversation = self.rows.get(owner, conversation_id)
        return conversation if form == "json" else as_markdown(conversation)


def as_markdown(conversation: dict[str, Any]) -> str:
    lines = [f"# {conversation['title'] or 'Conversation'}", ""]
    for message in conversation["messages"]:
        lines += [f"## {message['question']}", "", message["answer"].strip(), ""]
        for c in message.get("citations", []):
            pages = c.get("page") or "-".join(str(p) for p in c.get("pages", []))
            gone = " (document deleted)" if c.get("deleted") else ""
            lines.append(f"- [{c.get('number')}] {c.get('document')}, p. {pages}{gone}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
