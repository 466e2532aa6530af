"""POST /v1/ask: an answer with citations, as JSON or as Server-Sent Events streamed token by token."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from docqa.api.deps import CallerDep, QADep, StateDep, readable
from docqa.api.draining import cut_at_shutdown
from docqa.api.state import AppState
from docqa.core.catalog_fields import where_pairs
from docqa.core.errors import DocqaError, InvalidRequestError
from docqa.core.events import AskEvent, ErrorEvent
from docqa.core.requests import MAX_QUESTION_CHARS, AskRequest
from docqa.core.scopes import AskedScope
from docqa.core.tenants import Grant

router = APIRouter(tags=["ask"])


class AskBody(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, examples=["What is the notice period?"])
    collection: str | None = Field(default=None, description="Collection to search (default: 'default').")
    thinking: bool = Field(default=False, description="Let Qwen3 reason in <think> before answering.")
    top_k: int | None = Field(default=None, ge=1, le=50, description="Chunks in the prompt (default 3).")
    max_tokens: int | None = Field(default=None, ge=1, le=32768, description="Cap on generated tokens.")
    document_id: int | None = Field(default=None, description="Search only this document.")
    where: dict[str, str | int] | None = Field(
        default=None,
        description="Only documents whose catalog entry (GET .../documents) has these values, like "
        '{"company": "3M", "year": 2022} or {"tags": "lease"}; case does not matter, a list field matches by item.',
    )
    thinking_budget: int | None = Field(
        default=None,
        ge=1,
        le=32768,
        description="With thinking: reasoning tokens before docqa closes the reasoning and the answer begins "
        "(default: DOCQA_LLM_THINKING_BUDGET).",
    )
    scope: AskedScope = Field(
        default="auto",
        description="lookup: the passages that answer (the best few chunks); document: one whole document (summary, "
        "outline, 'list all X in it'), read in one prompt where it fits, else part by part; compare: two or more "
        "named documents point by point; collection: every document of the collection (or of `where`), each read "
        "for the question, the answer a table of findings. auto chooses from the question and the catalog; the "
        "answer's `scope` says which was used.",
    )
    document_ids: list[int] | None = Field(
        default=None,
        max_length=1000,
        description="The documents a comparison or a document question reads where the question names none; for a "
        "collection question, the documents it reads (a selection).",
    )
    seed: int | None = Field(default=None, description="Sampling seed for repeatable answers.")
    temperature: float | None = Field(default=None, ge=0, le=2, description="Override the mode's temperature.")
    stream: bool = Field(default=False, description="Stream Server-Sent Events instead of one JSON answer.")
    cache: bool = Field(default=True, description="Answer from the answer cache when this question was asked before.")
    earlier_question: str | None = Field(
        default=None,
        max_length=MAX_QUESTION_CHARS,
        description="The question asked before this one, for a follow-up ('and the governing law?'): it is "
        "searched together with the question and shown to the model.",
    )
    # Benchmarks only (DOCQA_API_BENCHMARK_REQUESTS): max_tokens tokens whatever the model says, end-of-generation
    # tokens and stop strings ignored, as llama-server's ignore_eos does for the former. Not in the API's schema.
    ignore_eos: SkipJsonSchema[bool] = False

    def request(self, asker: str = "") -> AskRequest:
        """asker: whose question (Grant.owner): a cached answer is found only by the key that asked it."""
        return AskRequest(
            self.question,
            self.collection,
            self.thinking,
            self.top_k,
            self.max_tokens,
            self.document_id,
            self.seed,
            self.temperature,
            use_cache=self.cache,
            ignore_eos=self.ignore_eos,
            earlier=(self.earlier_question,) if self.earlier_question else (),  # a blank one: AskRequest.follows
            where=where_pairs(self.where),
            thinking_budget=self.thinking_budget,
            scope=self.scope,
            document_ids=tuple(self.document_ids or ()),
            asker=asker,
        )


def sse(event: AskEvent) -> bytes:
    return f"event: {event.kind}\ndata: {json.dumps(event.as_dict(), ensure_ascii=False)}\n\n".encode()


async def sse_stream(first: AskEvent, events: AsyncIterator[AskEvent]) -> AsyncIterator[bytes]:
    yield sse(first)
    try:
        async for event in events:
            yield sse(event)
    except DocqaError as exc:  # after the 200 header, errors travel as an event
        yield sse(ErrorEvent(str(exc)))


async def answered(
    state: AppState,
    grant: Grant,
    stream: bool,
    answer: Callable[[], Awaitable[dict[str, Any]]],
    events: Callable[[], AsyncIterator[AskEvent]],
) -> StreamingResponse | dict[str, Any]:
    """An answer as JSON, or its events as SSE, run in one of the caller's generation slots (429 past its key's
    limit): given back when the answer is written, or when the stream ends, fails or its client leaves; a stream
    still going when the server's grace period ends is cut off with an error event (docqa.api.draining)."""
    if not stream:
        with state.slots.slot(grant):
            return await answer()
    # retrieval errors (404, 409, ...) are still HTTP statuses: the first event is awaited here
    first, held = await state.slots.opened(grant, cut_at_shutdown(events(), state))
    return StreamingResponse(
        sse_stream(first, held),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post("/v1/ask", summary="Answer a question from a collection, with citations", response_model=None)
async def ask(
    body: AskBody, qa: QADep, state: StateDep, grant: CallerDep, request: Request
) -> StreamingResponse | dict[str, Any]:
    readable(grant, body.collection or qa.settings.collection)
    if body.ignore_eos and not qa.settings.api.benchmark_requests:
        raise InvalidRequestError(
            "ignore_eos is a benchmark switch: this server refuses it (DOCQA_API_BENCHMARK_REQUESTS=true accepts it)"
        )
    asked = body.request(grant.owner)

    async def answer() -> dict[str, Any]:
        return (await qa.aask(asked, request.is_disconnected)).as_dict()

    return await answered(state, grant, body.stream, answer, lambda: qa.astream(asked))
