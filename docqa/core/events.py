"""What an answer streams, one typed event per step: the service yields these; the REST route writes
each as a Server-Sent Event (`kind` and `as_dict()`), the OpenAI route and the CLI read their fields.

The order is always: one CitationsEvent, progress while a long prompt is read (some engines) or reading
events while a question over many documents reads them, reasoning
and answer deltas, then DoneEvent or ErrorEvent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from docqa.core.errors import DocqaError
from docqa.core.types import Citation, Mode, Timings

EventKind = Literal["citations", "progress", "reading", "reasoning", "answer", "done", "error"]


@dataclass(frozen=True)
class CitationsEvent:
    """The sources the prompt holds, before any text (their best pages come with DoneEvent)."""

    citations: list[Citation]
    mode: Mode
    warnings: tuple[str, ...] = ()  # said before the answer: e.g. thinking asked of a model without it
    scope: str = "lookup"  # what the question was read as (docqa.core.scopes)
    kind: ClassVar[EventKind] = "citations"

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "citations": [c.as_dict() for c in self.citations],
            "mode": self.mode,
            "scope": self.scope,
        }
        if self.warnings:
            data["warnings"] = list(self.warnings)
        return data


@dataclass(frozen=True)
class ProgressEvent:
    """How much of a long prompt the model has read, before its first token (engines that read a prompt
    in slices say it after each slice: on a CPU a 12k-token prompt takes minutes)."""

    prompt_tokens: int
    done: int
    kind: ClassVar[EventKind] = "progress"

    def as_dict(self) -> dict[str, object]:
        return {"prompt_tokens": self.prompt_tokens, "done": self.done}

    def line(self) -> str:
        return f"reading {self.prompt_tokens:,} tokens: {100 * self.done // max(self.prompt_tokens, 1)}%"


@dataclass(frozen=True)
class ReadingEvent:
    """A question over many documents (or many parts of one) has read one more of them: `read` of `total`,
    the last one `document` (its name, or a part's pages), and whether it held what was asked."""

    read: int
    total: int
    document: str
    found: bool
    kind: ClassVar[EventKind] = "reading"

    def as_dict(self) -> dict[str, object]:
        return {"read": self.read, "total": self.total, "document": self.document, "found": self.found}

    def line(self) -> str:
        return f"read {self.read} of {self.total}: {self.document[:60]}"


@dataclass(frozen=True)
class ReasoningDelta:
    text: str
    kind: ClassVar[EventKind] = "reasoning"

    def as_dict(self) -> dict[str, object]:
        return {"text": self.text}


@dataclass(frozen=True)
class AnswerDelta:
    text: str
    kind: ClassVar[EventKind] = "answer"

    def as_dict(self) -> dict[str, object]:
        return {"text": self.text}


@dataclass(frozen=True)
class DoneEvent:
    """The answer is complete: its timings, why it ended, and the citations refined by its text."""

    timings: Timings
    finish_reason: str
    citations: list[Citation] = field(default_factory=list)
    cached: bool = False  # replayed from the answer cache
    message_id: int | None = None  # asked in a conversation: the message it was kept as (for feedback)
    kind: ClassVar[EventKind] = "done"

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "timings": self.timings.as_dict(),
            "finish_reason": self.finish_reason,
            "citations": [c.as_dict() for c in self.citations],
        }
        if self.cached:
            data["cached"] = True
        if self.message_id is not None:
            data["message_id"] = self.message_id
        return data


@dataclass(frozen=True)
class ErrorEvent:
    message: str
    error: DocqaError | None = field(default=None, compare=False)  # its type decides the HTTP status
    kind: ClassVar[EventKind] = "error"

    def as_dict(self) -> dict[str, object]:
        return {"message": self.message}


AskEvent = CitationsEvent | ProgressEvent | ReadingEvent | ReasoningDelta | AnswerDelta | DoneEvent | ErrorEvent
