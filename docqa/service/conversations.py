"""Conversations on the server (docqa.store.conversations): asking in one carries the questions before it,
and keeps the answer with its citations, reasoning and timings; listing, renaming, deleting, exporting
(JSON, Markdown) and feedback. A caller is known by the hash of its API key: a key sees only its own."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

from docqa.core.errors import DocqaError
from docqa.core.events import AnswerDelta, AskEvent, CitationsEvent, DoneEvent, ErrorEvent, ReasoningDelta
from docqa.core.requests import AskRequest, storable
from docqa.core.types import Answer
from docqa.store.conversations import MESSAGES_PAGE, Conversations, Owner
from docqa.store.models import CollectionRow
from docqa.store.protocol import Store

logger = logging.getLogger(__name__)

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
        return self.rows.create(owner, storable(title, "the title"))

    def find(self, owner: Owner, search: str = "") -> list[dict[str, Any]]:
        return self.rows.find(owner, storable(search, "the search"))

    def get(
        self, owner: Owner, conversation_id: int, before: int | None = None, limit: int = MESSAGES_PAGE
    ) -> dict[str, Any]:
        return self.rows.get(owner, conversation_id, before, limit)

    def rename(self, owner: Owner, conversation_id: int, title: str) -> dict[str, Any]:
        return self.rows.rename(owner, conversation_id, storable(title, "the title"))

    def delete(self, owner: Owner, conversation_id: int) -> None:
        self.rows.delete(owner, conversation_id)

    def feedback(self, owner: Owner, conversation_id: int, message_id: int, rating: int, note: str | None) -> None:
        self.rows.feedback(owner, conversation_id, message_id, rating, storable(note, "the note") if note else note)

    def rated(self, collection: str | None) -> list[dict[str, Any]]:
        """Every rated answer of the collection, whoever asked (`docqa feedback export`)."""
        return self.rows.rated(self._qa.collection(collection).id)

    async def _carried(self, owner: Owner, conversation_id: int, request: AskRequest) -> AskRequest:
        earlier = await asyncio.to_thread(self.rows.questions, owner, conversation_id, EARLIER_KEPT)
        return replace(request, earlier=tuple(earlier))

    async def _keep(self, owner: Owner, conversation_id: int, question: str, answer: dict[str, Any]) -> int | str:
        """The message ID the answer is kept as, or why it could not be (a database away or locked, a disk
        full): written off the event loop, so that a database waiting on a lock holds no other request."""
        try:
            return await asyncio.to_thread(self.rows.add, owner, conversation_id, question, answer)
        except DocqaError as exc:
            logger.warning("an answer in conversation %s was not kept: %s", conversation_id, exc)
            return f"the answer was not kept in the conversation: {exc}"
        except Exception:
            logger.exception("an answer in conversation %s was not kept", conversation_id)
            return "the answer was not kept in the conversation (the server's log says why)"

    async def ask(
        self,
        owner: Owner,
        conversation_id: int,
        request: AskRequest,
        gone: Callable[[], Awaitable[bool]] | None = None,
    ) -> dict[str, Any]:
        """The answer to a question asked in the conversation (its earlier questions carried), kept in it; one
        that could not be kept is still returned, its warnings saying so and its message_id null."""
        carried = await self._carried(owner, conversation_id, request)
        answer = (await self._qa.aask(carried, gone)).as_dict()
        kept = await self._keep(owner, conversation_id, request.question, answer)
        if isinstance(kept, str):
            warnings = [*answer.get("warnings", []), kept]  # type: ignore[misc]
            return {**answer, "warnings": warnings, "conversation_id": conversation_id, "message_id": None}
        return {**answer, "conversation_id": conversation_id, "message_id": kept}

    async def stream(self, owner: Owner, conversation_id: int, request: AskRequest) -> AsyncIterator[AskEvent]:
        """The answer's events, as /v1/ask streams them; kept in the conversation when it is done (the done
        event names the message). One that could not be kept: its done event, then an error saying so."""
        carried = await self._carried(owner, conversation_id, request)
        kept: dict[str, Any] = {"answer": "", "reasoning": "", "warnings": []}
        async for event in self._qa.astream(carried):
            if isinstance(event, CitationsEvent):
                kept.update(mode=event.mode, warnings=list(event.warnings))
            elif isinstance(event, AnswerDelta | ReasoningDelta):
                kept[event.kind] += event.text
            elif isinstance(event, DoneEvent):
                kept.update(event.as_dict())
                message = await self._keep(owner, conversation_id, request.question, kept)
                if isinstance(message, str):
                    yield event
                    yield ErrorEvent(message)
                    return
                event = replace(event, message_id=message)  # the page rates this message by its ID
            yield event

    def export(self, owner: Owner, conversation_id: int, form: str) -> str | dict[str, Any]:
        conversation = self.rows.get(owner, conversation_id, limit=EXPORTED_MESSAGES)
        return conversation if form == "json" else as_markdown(conversation)


EXPORTED_MESSAGES = 1_000_000  # an export is the whole conversation, however long


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
