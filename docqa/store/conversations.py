"""Conversations kept on the server, the same on SQLite and Postgres: per collection and per owner (a hash
of the API key that made them, "" without keys: a key sees only its own), each message with its answer,
reasoning, citations, timings and the asker's feedback. Deleting a document leaves the answers that cited
it readable; their citations are marked `deleted` when read."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, delete, func, or_, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from docqa.core.errors import ConversationNotFoundError, MessageNotFoundError
from docqa.store.models import Base, DocumentRow, now

TITLE_CHARS = 80  # a conversation is titled by its first question, cut to this many characters
MESSAGES_PAGE = 100  # messages a conversation's GET returns at once, the latest (older ones: `before`)


def _literal(text: str) -> str:
    """`text` as a LIKE pattern matching itself: its % and _ are letters in a search, not wildcards."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# The IDs are INTEGER columns: 32 bits on Postgres, where a larger ID in a query is an error, not "no such row"
MAX_ID = 2**31 - 1


class ConversationRow(Base):
    __tablename__ = "conversations"
    __table_args__ = {"sqlite_autoincrement": True}  # noqa: RUF012 (SQLAlchemy's declarative form)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    owner: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=now)
    updated_at: Mapped[datetime] = mapped_column(default=now)


class MessageRow(Base):
    __tablename__ = "conversation_messages"
    __table_args__ = {"sqlite_autoincrement": True}  # noqa: RUF012
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    reasoning: Mapped[str] = mapped_column(Text)
    record: Mapped[str] = mapped_column(Text)  # JSON: citations, timings, mode, finish_reason, warnings, cached
    feedback: Mapped[int | None] = mapped_column(Integer)  # 1 up, -1 down, None: none given
    feedback_note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=now)


@dataclass(frozen=True)
class Owner:
    """Whose conversations: a collection and the hash of the caller's API key ("" without keys)."""

    collection_id: int
    key_hash: str


# What a rated answer's citation keeps in `docqa feedback export`: enough to score retrieval on it (the
# document and the page that held the quote), not the chunk IDs, which a re-ingest renumbers.
EXPORTED_CITATION = ("document", "document_id", "pages", "page", "quote")


def _summary(row: ConversationRow, messages: int) -> dict[str, Any]:
    return {
        "id": row.id,
        "title": row.title,
        "messages": messages,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
    }


def _citations(record: dict[str, Any]) -> list[dict[str, Any]]:
    return list(record.get("citations", []))


def _message(row: MessageRow, record: dict[str, Any], live_documents: set[int]) -> dict[str, Any]:
    """A kept message as the API shows it; `record` is its parsed JSON (answer's citations, timings, mode)."""
    for citation in _citations(record):
        citation["deleted"] = citation.get("document_id") not in live_documents
    return {
        "id": row.id,
        "question": row.question,
        "answer": row.answer,
        "reasoning": row.reasoning,
        **record,
        "feedback": {"rating": row.feedback, "note": row.feedback_note} if row.feedback is not None else None,
        "created_at": row.created_at.isoformat(),
    }


class Conversations:
    def __init__(self, session: Callable[[], AbstractContextManager[Session]]) -> None:
        """session: the store's transactions (Store.session), so errors are the store's (a database away)."""
        self._session = session

    def _owned(self, s: Session, owner: Owner, conversation_id: int) -> ConversationRow:
        row = s.get(ConversationRow, conversation_id) if 0 < conversation_id <= MAX_ID else None
        if row is None or row.collection_id != owner.collection_id or row.owner != owner.key_hash:
            raise ConversationNotFoundError(conversation_id)
        return row

    def create(self, owner: Owner, title: str = "") -> dict[str, Any]:
        with self._session() as s:
            row = ConversationRow(collection_id=owner.collection_id, owner=owner.key_hash, title=title.strip())
            s.add(row)
            s.flush()
            return _summary(row, 0)

    def find(self, owner: Owner, search: str = "") -> list[dict[str, Any]]:
        """The owner's conversations, the latest first; `search` matches a title or a question (no case)."""
        counts = (
            select(MessageRow.conversation_id, func.count().label("n")).group_by(MessageRow.conversation_id).subquery()
        )
        query = (
            select(ConversationRow, func.coalesce(counts.c.n, 0))
            .outerjoin(counts, counts.c.conversation_id == ConversationRow.id)
            .where(ConversationRow.collection_id == owner.collection_id, ConversationRow.owner == owner.key_hash)
            .order_by(ConversationRow.updated_at.desc(), ConversationRow.id.desc())
        )
        if search.strip():
            pattern = f"%{_literal(search.strip().lower())}%"
            asked = select(MessageRow.conversation_id).where(func.lower(MessageRow.question).like(pattern, escape="\\"))
            query = query.where(
                or_(func.lower(ConversationRow.title).like(pattern, escape="\\"), ConversationRow.id.in_(asked))
            )
        with self._session() as s:
            return [_summary(row, int(n)) for row, n in s.execute(query)]

    def get(
        self, owner: Owner, conversation_id: int, before: int | None = None, limit: int = MESSAGES_PAGE
    ) -> dict[str, Any]:
        """The conversation with its latest `limit` messages (before message `before`, for the page before),
        oldest first; a citation of a deleted document marked so. `earlier` says whether older ones remain."""
        with self._session() as s:
            row = self._owned(s, owner, conversation_id)
            query = select(MessageRow).where(MessageRow.conversation_id == row.id)
            if before is not None:
                query = query.where(MessageRow.id < max(min(before, MAX_ID), 0))
            messages = list(s.scalars(query.order_by(MessageRow.id.desc()).limit(limit + 1)))[::-1]
            earlier = len(messages) > limit
            messages = messages[1:] if earlier else messages
            records = [json.loads(m.record) for m in messages]
            cited = {c.get("document_id") for record in records for c in _citations(record)}
            live = set(s.scalars(select(DocumentRow.id).where(DocumentRow.id.in_([c for c in cited if c]))))
            shown = [_message(m, record, live) for m, record in zip(messages, records, strict=True)]
            total = s.scalar(select(func.count()).where(MessageRow.conversation_id == row.id))
            summary = _summary(row, int(total or 0))
            return {**summary, "messages": shown, "messages_total": summary["messages"], "earlier": earlier}

    def questions(self, owner: Owner, conversation_id: int, last: int) -> list[str]:
        """The last `last` questions asked, oldest first (what a follow-up carries)."""
        with self._session() as s:
            row = self._owned(s, owner, conversation_id)
            query = select(MessageRow.question).where(MessageRow.conversation_id == row.id)
            return list(s.scalars(query.order_by(MessageRow.id.desc()).limit(last)))[::-1]

    def rename(self, owner: Owner, conversation_id: int, title: str) -> dict[str, Any]:
        with self._session() as s:
            row = self._owned(s, owner, conversation_id)
            row.title, row.updated_at = title.strip(), now()
            count = s.scalar(select(func.count()).where(MessageRow.conversation_id == row.id))
            return _summary(row, int(count or 0))

    def delete(self, owner: Owner, conversation_id: int) -> None:
        with self._session() as s:
            row = self._owned(s, owner, conversation_id)
            s.execute(delete(MessageRow).where(MessageRow.conversation_id == row.id))
            s.delete(row)

    def add(self, owner: Owner, conversation_id: int, asked: str, answer: dict[str, Any]) -> int:
        """Keep an answered question, `asked`, with its answer (Answer.as_dict()); the conversation's title
        is its first question. (Kept as the message's text: the store reads no question to search with.)"""
        record = {k: v for k, v in answer.items() if k not in ("answer", "reasoning")}
        with self._session() as s:
            row = self._owned(s, owner, conversation_id)
            message = MessageRow(
                conversation_id=row.id,
                question=asked,
                answer=str(answer.get("answer", "")),
                reasoning=str(answer.get("reasoning", "")),
                record=json.dumps(record, ensure_ascii=False),
            )
            s.add(message)
            if not row.title:
                row.title = " ".join(asked.split())[:TITLE_CHARS]
            row.updated_at = now()
            s.flush()
            return message.id

    def feedback(self, owner: Owner, conversation_id: int, message_id: int, rating: int, note: str | None) -> None:
        with self._session() as s:
            row = self._owned(s, owner, conversation_id)
            message = s.get(MessageRow, message_id) if 0 < message_id <= MAX_ID else None
            if message is None or message.conversation_id != row.id:
                raise MessageNotFoundError(conversation_id, message_id)
            message.feedback, message.feedback_note = rating, note

    def rated(self, collection_id: int) -> list[dict[str, Any]]:
        """Every message of the collection with feedback (all owners): an eval set of real questions."""
        query = (
            select(MessageRow, ConversationRow.id)
            .join(ConversationRow, ConversationRow.id == MessageRow.conversation_id)
            .where(ConversationRow.collection_id == collection_id, MessageRow.feedback.is_not(None))
            .order_by(MessageRow.id)
        )
        with self._session() as s:
            return [
                {
                    "conversation_id": cid,
                    "message_id": m.id,
                    "question": m.question,
                    "answer": m.answer,
                    "rating": m.feedback,
                    "note": m.feedback_note,
                    "citations": [{k: c.get(k) for k in EXPORTED_CITATION} for c in _citations(json.loads(m.record))],
                    "asked_at": m.created_at.isoformat(),
                }
                for m, cid in s.execute(query)
            ]
