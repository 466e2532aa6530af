"""OpenAI-compatible endpoints, so Open WebUI and OpenAI clients can use docqa as a model.

Each collection is a model named `docqa/<collection>`. A chat completion answers the last user
message from that collection; the user message before it steers retrieval too and is shown to the
model, so that a follow-up ("and the governing law?") is read in the conversation's sense. Reasoning streams in
`delta.reasoning_content` and the answer in `delta.content`, as vLLM and llama.cpp's server do;
the citations close the answer as a "Sources:" block and come whole in a `citations` field, and
each as a chunk whose `event` field is a source event, as Open WebUI takes them (citation chips).
Thinking is chosen by `/think` or `/no_think` in the message, then
`chat_template_kwargs.enable_thinking`, then `reasoning_effort` ("none" means off).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from docqa.answering.citing import citation_label, shown_citations, sources_footer
from docqa.api.deps import CallerDep, QADep, StateDep, readable
from docqa.api.draining import cut_at_shutdown
from docqa.core.catalog_fields import where_pairs
from docqa.core.errors import DocqaError, InvalidRequestError, UnknownModelError
from docqa.core.events import AnswerDelta, AskEvent, CitationsEvent, DoneEvent, ErrorEvent, ReasoningDelta
from docqa.core.requests import AskRequest
from docqa.core.scopes import AskedScope
from docqa.core.types import Timings

router = APIRouter(prefix="/v1", tags=["openai"])

MODEL_PREFIX = "docqa/"
MAX_STOP = 4  # as OpenAI
_SOFT_SWITCH = re.compile(r"(^|\s)/(no_think|think)\b")


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(p.text or "" for p in self.content if p.type == "text")
        return self.content or ""


class StreamOptions(BaseModel):
    include_usage: bool = False


MAX_MESSAGES = 4096  # an Open WebUI chat sends its whole history; 2.3 million tiny ones held the event loop 11 s


def _few_enough(messages: object) -> object:
    """Counted before any message is validated: validating each of 400,000 took 0.6 s of the event loop."""
    if isinstance(messages, list) and len(messages) > MAX_MESSAGES:
        raise ValueError(f"at most {MAX_MESSAGES:,} messages, not {len(messages):,}")
    return messages


class ChatCompletionBody(BaseModel):
    """The fields of OpenAI's request that docqa honours; of the others, those that would change what a client
    gets back (several choices, a required tool call, a response format, log-probabilities) are refused with a 400, as
    OpenAI-compatible servers do, and the rest (user, metadata, ...) are accepted and ignored."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {
                    "model": "docqa/default",
                    "messages": [{"role": "user", "content": "What is the notice period? /no_think"}],
                    "stream": True,
                }
            ]
        },
    )
    model: str = Field(description="'docqa/<collection>' (see GET /v1/models).")
    messages: Annotated[list[ChatMessage], BeforeValidator(_few_enough)] = Field(
        min_length=1, description=f"The conversation, at most {MAX_MESSAGES:,} messages (the last user one is asked)."
    )
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=32768)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=32768)
    temperature: float | None = Field(default=None, ge=0, le=2)
    seed: int | None = None
    reasoning_effort: str | None = Field(default=None, description="'none' for non-thinking; any other turns it on.")
    chat_template_kwargs: dict[str, Any] | None = Field(default=None, description="{'enable_thinking': bool}")
    top_k: int | None = Field(default=None, ge=1, le=50, description="docqa: chunks put in the prompt.")
    document_id: int | None = Field(default=None, description="docqa: search only this document.")
    where: dict[str, str | int] | None = Field(
        default=None, description='docqa: only documents whose catalog has these values ({"company": "3M"}).'
    )
    cache: bool = Field(default=True, description="docqa: answer from the answer cache when possible.")
    scope: AskedScope = Field(
        default="auto",
        description="docqa: lookup, document, compare or collection; auto (the default) chooses from the question "
        "('which of these contracts ...' reads every document, 'summarize ...' the whole document).",
    )
    document_ids: list[int] | None = Field(
        default=None,
        max_length=1000,
        description="docqa: the documents a comparison reads where the question names none; a collection "
        "question's selection.",
    )
    stop: str | list[str] | None = Field(default=None, description="Up to 4 strings that end the answer.")
    n: int = Field(default=1, description="Only 1: docqa writes one answer.")
    tools: list[Any] | None = Field(
        default=None,
        description="Accepted and never called: with tool_choice unset, 'auto' or 'none' a model may answer in text, "
        "which docqa always does (chat clients such as Open WebUI offer their tools with every message).",
    )
    tool_choice: Any = Field(default=None, description="'auto' or 'none'; a call it requires is refused.")
    response_format: dict[str, Any] | None = Field(default=None, description="Only {'type': 'text'}.")
    logprobs: bool | None = Field(default=None, description="Not supported.")
    top_logprobs: int | None = Field(default=None, description="Not supported.")

    def refuse_unsupported(self) -> None:
        """A 400 naming the option, where ignoring it would give the client something else than it asked."""
        refused = [
            ("n", self.n != 1),
            ("tool_choice", self.tool_choice not in (None, "none", "auto")),
            ("response_format", (self.response_format or {"type": "text"}).get("type") != "text"),
            ("logprobs", bool(self.logprobs) or self.top_logprobs is not None),
        ]
        names = [name for name, bad in refused if bad]
        if names:
            raise InvalidRequestError(f"not supported by docqa: {', '.join(names)} (docqa writes one text answer)")

    def stop_strings(self) -> tuple[str, ...]:
        stop = [self.stop] if isinstance(self.stop, str) else (self.stop or [])
        if len(stop) > MAX_STOP or any(not s for s in stop):
            raise InvalidRequestError(f"stop: at most {MAX_STOP} non-empty strings")
        return tuple(stop)


def collection_of(model: str) -> str:
    if model in ("docqa", MODEL_PREFIX.rstrip("/")):
        return "default"
    if not model.startswith(MODEL_PREFIX) or not model[len(MODEL_PREFIX) :]:
        raise UnknownModelError(model)
    return model[len(MODEL_PREFIX) :]


def without_switches(message: str) -> str:
    """The message without Qwen's /think and /no_think soft switches."""
    return _SOFT_SWITCH.sub(" ", message).strip()


def choose_thinking(body: ChatCompletionBody, message: str) -> tuple[bool, str]:
    """(thinking on?, the message without Qwen's /think and /no_think soft switches)."""
    switches = _SOFT_SWITCH.findall(message)
    cleaned = without_switches(message)
    if switches:
        return switches[-1][1] == "think", cleaned
    kwargs = body.chat_template_kwargs or {}
    if "enable_thinking" in kwargs:
        if not isinstance(kwargs["enable_thinking"], bool):  # "no" is truthy: it turned thinking on
            raise InvalidRequestError("chat_template_kwargs.enable_thinking: true or false")
        return kwargs["enable_thinking"], cleaned
    if body.reasoning_effort is not None:
        return body.reasoning_effort.lower() not in ("none", "off"), cleaned
    return False, cleaned


def ask_request(body: ChatCompletionBody, asker: str = "") -> AskRequest:
    body.refuse_unsupported()
    users = [m for m in body.messages if m.role == "user"]
    if not users or not users[-1].text().strip():
        raise InvalidRequestError("no user message to answer")
    thinking, question = choose_thinking(body, users[-1].text())
    earlier = tuple(text for m in users[:-1] if (text := without_switches(m.text())))
    return AskRequest(
        question,
        collection_of(body.model),
        thinking,
        body.top_k,
        body.max_completion_tokens or body.max_tokens,
        body.document_id,
        body.seed,
        body.temperature,
        use_cache=body.cache,
        earlier=earlier[-1:],  # the service reads the last one
        stop=body.stop_strings(),
        where=where_pairs(body.where),
        scope=body.scope,
        document_ids=tuple(body.document_ids or ()),
        asker=asker,
    )


def _finish(reason: str) -> str:
    return "length" if reason == "length" else "stop"


def _usage(timings: dict[str, Any]) -> dict[str, int]:
    prompt, completion = int(timings.get("prompt_tokens") or 0), int(timings.get("completion_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@router.get("/models", summary="Every collection as a model, 'docqa/<collection>' (OpenAI format)")
def list_models(qa: QADep, grant: CallerDep) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {
                "id": f"{MODEL_PREFIX}{c.name}",
                "object": "model",
                "created": int(c.created_at.timestamp()),
                "owned_by": "docqa",
            }
            for c in qa.collections()
            if grant.can_read(c.name)  # a key sees the collections it is granted
        ],
    }


@router.post("/chat/completions", summary="Answer the last user message from a collection (OpenAI format)")
async def chat_completions(
    body: ChatCompletionBody, qa: QADep, state: StateDep, grant: CallerDep, http: Request
) -> Any:
    request = ask_request(body, grant.owner)
    readable(grant, request.collection or "default")
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    if not body.stream:
        with state.slots.slot(grant):
            answer = await qa.aask(request, http.is_disconnected)
        result = answer.as_dict()
        citations: list[dict[str, Any]] = result["citations"]  # type: ignore[assignment]
        message: dict[str, Any] = {"role": "assistant", "content": answer.answer + sources_footer(citations)}
        if answer.reasoning:
            message["reasoning_content"] = answer.reasoning
        return {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": body.model,
            "choices": [{"index": 0, "message": message, "finish_reason": _finish(answer.finish_reason)}],
            "usage": _usage(result["timings"]),  # type: ignore[arg-type]
            "citations": citations,
            "cached": answer.cached,  # docqa's own field, beside citations: replayed from the answer cache
        }
    # the slot back when they end; cut off when the server's grace period ends (docqa.api.draining)
    first, events = await state.slots.opened(grant, cut_at_shutdown(qa.astream(request), state))
    include_usage = bool(body.stream_options and body.stream_options.include_usage)
    site = str(http.base_url).rstrip("/")  # where a source's link points: this server, as the client reached it
    chunks = _stream_chunks(first, events, completion_id, created, body.model, include_usage, site)
    return StreamingResponse(
        chunks, media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )


def source_events(citations: list[dict[str, Any]], model: str, site: str) -> list[dict[str, Any]]:
    """Each citation as a chat client's source event, in a chunk's `event` field: Open WebUI shows them
    as citation chips, the quote inside, and links them to the answer's [n]; OpenAI's clients ignore the
    field. The link opens the original file at the page (GET .../documents/{id}/file on `site`; with API keys
    on, a browser following it has none, and gets 401)."""
    collection = collection_of(model)
    events = []
    for citation in shown_citations(citations):
        name = citation_label(citation)
        page = citation.get("page") or citation["pages"][0]
        url = f"{site}/v1/collections/{collection}/documents/{citation['document_id']}/file#page={page}"
        events.append(
            {
                "type": "source",
                "data": {
                    "source": {"id": str(citation["number"]), "name": name, "url": url},
                    "document": [citation.get("quote") or name],
                    # Open WebUI counts a source's pages from 0, as its own PDF loader writes them
                    "metadata": [{"source": citation["document"], "name": name, "page": page - 1}],
                },
            }
        )
    return events


async def _stream_chunks(
    first: AskEvent,
    events: AsyncIterator[AskEvent],
    completion_id: str,
    created: int,
    model: str,
    include_usage: bool,
    site: str,
) -> AsyncIterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    done = DoneEvent(Timings(), "stop", first.citations if isinstance(first, CitationsEvent) else [])
    try:
        async for event in events:
            if isinstance(event, ReasoningDelta):
                yield chunk({"reasoning_content": event.text})
            elif isinstance(event, AnswerDelta):
                yield chunk({"content": event.text})
            elif isinstance(event, DoneEvent):
                done = event
            elif isinstance(event, ErrorEvent):
                raise event.error or DocqaError(event.message)
    except DocqaError as exc:  # after the 200 header, an error travels in the stream, as OpenAI does
        yield f"data: {json.dumps({'error': {'type': type(exc).__name__, 'message': str(exc)}})}\n\n".encode()
        yield b"data: [DONE]\n\n"
        return
    citations = [c.as_dict() for c in done.citations]
    footer = sources_footer(citations)
    if footer:
        yield chunk({"content": footer})
    for source in source_events(citations, model, site):
        yield chunk({}, event=source)
    yield chunk({}, _finish(done.finish_reason), citations=citations, cached=done.cached)
    if include_usage:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": _usage(done.timings.as_dict()),
        }
        yield f"data: {json.dumps(payload)}\n\n".encode()
    yield b"data: [DONE]\n\n"
