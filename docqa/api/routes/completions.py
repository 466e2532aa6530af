"""`POST /v1/completions`: raw prompts on this process's generator, no retrieval. What makes a docqa GPU
box a generation node for other docqa processes (their DOCQA_LLM_ENDPOINT), as vLLM or llama-server would
be: they render the prompt, this one only generates, streamed in OpenAI's completions format, with the
batching engine's 429 backpressure and a client's disconnect cancelling its request. `POST /v1/tokenize`
counts a prompt's tokens with the generator's own tokenizer; `POST /v1/embeddings` embeds texts as search
does (their DOCQA_EMBED_ENDPOINT), a query with the model's query instruction when `input_type` says so."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from docqa.api.deps import ServerDep
from docqa.core.errors import DocqaError, InvalidRequestError
from docqa.core.requests import is_unicode_text
from docqa.core.sampling_params import SamplingParams
from docqa.core.streams import GenerationStream, GenEvent

router = APIRouter(prefix="/v1", tags=["generation node"])
# A `--generator-only` node's GET /v1/models: its generator, as vLLM lists its model (a full docqa lists its
# collections there instead, docqa.api.routes.openai_compat).
models_router = APIRouter(prefix="/v1", tags=["generation node"])


class IncludeUsage(BaseModel):
    include_usage: bool = False


def _unicode(text: str) -> str:
    """A text a tokenizer can read: JSON carries lone surrogates ("\\ud800") that no encoder writes."""
    if not is_unicode_text(text):
        raise ValueError("holds a lone surrogate (\\ud800-\\udfff): not Unicode text")
    return text


UnicodeText = Annotated[str, AfterValidator(_unicode)]


# OpenAI's completion fields docqa does not serve, and the value each may keep: any other is refused (400),
# where ignoring it would give the client something else than it asked for.
_UNSERVED: dict[str, tuple[object, ...]] = {
    "n": (1, None),
    "best_of": (1, None),
    "logprobs": (None, 0, False),
    "echo": (False, None),
    "suffix": (None, ""),
    "logit_bias": (None, {}),
    "presence_penalty": (0, 0.0, None),
    "frequency_penalty": (0, 0.0, None),
    "functions": (None, []),
    "function_call": (None, "none"),
    "tools": (None, []),
    "tool_choice": (None, "none"),
}


class CompletionBody(BaseModel):
    model_config = ConfigDict(extra="allow")  # OpenAI's other fields: user is ignored, _UNSERVED ones refused
    prompt: UnicodeText = Field(min_length=1)
    model: str | None = None
    max_tokens: int = Field(default=256, ge=1)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0, allow_inf_nan=False)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    top_k: int = Field(default=0, ge=0, le=1_000_000)
    min_p: float = Field(default=0.0, ge=0.0, le=1.0)
    seed: int | None = None
    stop: str | list[str] | None = None
    stream: bool = False
    stream_options: IncludeUsage | None = None
    ignore_eos: bool = False

    def refuse_unserved(self) -> None:
        extra = self.model_extra or {}
        refused = sorted(name for name, kept in _UNSERVED.items() if name in extra and extra[name] not in kept)
        if refused:
            raise InvalidRequestError(f"not supported by docqa's /v1/completions: {', '.join(refused)}")

    def params(self) -> SamplingParams:
        self.refuse_unserved()
        stop = [self.stop] if isinstance(self.stop, str) else (self.stop or [])
        return SamplingParams(
            temperature=self.temperature,
            top_p=self.top_p,
            top_k=self.top_k,
            min_p=self.min_p,
            max_tokens=self.max_tokens,
            seed=self.seed if self.seed is not None else -1,
            stop=tuple(stop),
            ignore_eos=self.ignore_eos,
        )


class TokenizeBody(BaseModel):
    prompt: UnicodeText


# Texts in one embeddings request: docqa's own client sends 16 chunks of up to 4k tokens (~20k characters
# each). A text is bounded by the chunk cap with room to spare, a request by its texts together: four texts
# of 60,000 words grew a node to 16.9 GB and kept it embedding after the client had left.
MAX_EMBED_INPUTS = 256
MAX_EMBED_TEXT_CHARS = 64_000
MAX_EMBED_REQUEST_CHARS = 1_000_000


class EmbeddingsBody(BaseModel):
    model_config = ConfigDict(extra="ignore")  # encoding_format, dimensions, user: not served
    input: UnicodeText | list[UnicodeText] = Field(description="A text or a list of texts.")
    model: str | None = None
    input_type: Literal["query", "document"] = Field(
        default="document",
        description="docqa's field: 'query' embeds with the model's query instruction (Qwen3-Embedding's), as "
        "search embeds a question.",
    )

    def texts(self) -> list[str]:
        texts = [self.input] if isinstance(self.input, str) else self.input
        if not texts or len(texts) > MAX_EMBED_INPUTS or not all(t.strip() for t in texts):
            raise InvalidRequestError(f"input: 1 to {MAX_EMBED_INPUTS} texts, none of them empty")
        longest = max(len(t) for t in texts)
        if longest > MAX_EMBED_TEXT_CHARS or sum(len(t) for t in texts) > MAX_EMBED_REQUEST_CHARS:
            raise InvalidRequestError(
                f"input: at most {MAX_EMBED_TEXT_CHARS:,} characters a text and {MAX_EMBED_REQUEST_CHARS:,} in all "
                f"(the longest here: {longest:,}); docqa embeds chunks of at most 4,096 tokens"
            )
        return texts


@router.post("/completions", response_model=None)
async def completions(body: CompletionBody, qa: ServerDep) -> StreamingResponse | dict[str, Any]:
    # Submitted in a worker thread: the engine tokenizes an uncounted prompt in the submitting thread
    # (docqa.engine.prompt_tokens; in its loop, between steps, that cost a GPU node ~0.4 s of a 16-ask burst of
    # 12k-token prompts), and an endpoint generator's submit waits for its server's headers, which must not
    # hold this loop (docqa.service.asking.AskRun._submit_off_loop, the ask path's twin). Busy: 429 before any byte.
    stream = await run_in_threadpool(qa.complete, body.prompt, body.params(), asyncio.get_running_loop())
    model = qa.status().generator or "docqa"
    head = {"id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion", "created": int(time.time()), "model": model}
    if body.stream:
        usage = bool(body.stream_options and body.stream_options.include_usage)
        return StreamingResponse(_events(stream, head, usage), media_type="text/event-stream")
    text: list[str] = []
    reason, counts = "length", {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    async for event in stream:
        if event.kind == "text":
            text.append(event.text)
        elif event.kind == "failed":  # a prompt over the context: 400 naming it; an endpoint's timeout: 504
            raise event.error or DocqaError(event.text or "generation failed")
        elif event.final:
            reason, counts = _ending(event)
    return {**head, "choices": [_choice("".join(text), reason)], "usage": counts}


@router.post("/embeddings", summary="Embed texts (OpenAI's form; input_type 'query' for questions)")
async def embeddings(body: EmbeddingsBody, qa: ServerDep) -> dict[str, Any]:
    vectors, model = await run_in_threadpool(qa.embed, body.texts(), body.input_type)
    return {
        "object": "list",
        "model": model,
        "data": [
            {"object": "embedding", "index": i, "embedding": [round(float(x), 7) for x in row]}
            for i, row in enumerate(vectors)
        ],
        "usage": {"prompt_tokens": 0, "total_tokens": 0},  # the embedder does not report its tokens here
    }


@models_router.get("/models", summary="The model this node generates with")
def models(qa: ServerDep) -> dict[str, Any]:
    """The generator (with `prompt_format`, docqa's field: the prompt its model reads, so that a docqa
    without the model's file renders prompts the node's way), then the embedder."""
    loaded = qa.status()
    data = []
    if loaded.generator:
        generator = getattr(qa, "generator", None)
        info = getattr(generator, "info", None)
        extra = {"prompt_format": info.prompt_format} if info is not None else {}
        data.append({"id": loaded.generator, "object": "model", "owned_by": "docqa", **extra})
    if loaded.embedder:
        data.append({"id": loaded.embedder, "object": "model", "owned_by": "docqa"})
    return {"object": "list", "data": data}


@router.post("/tokenize")
async def tokenize(body: TokenizeBody, qa: ServerDep) -> dict[str, int]:
    # off the event loop: a 12k-token prompt takes milliseconds to count, while this loop streams every answer
    return {"count": await run_in_threadpool(qa.count_tokens, body.prompt)}


async def _events(stream: GenerationStream, head: dict[str, Any], usage: bool) -> AsyncIterator[str]:
    async for event in stream:  # leaving early (the client went away) cancels the request
        if event.kind == "text":
            yield _data({**head, "choices": [_choice(event.text, None)]})
            continue
        if not event.final:  # progress through a long prompt: an SSE comment, which OpenAI clients skip, keeps
            yield f": reading the prompt, {event.prompt_done} of {event.prompt_tokens} tokens\n\n"  # the line alive
            continue
        if event.kind == "failed":  # the status went out with the first byte: the error goes in the stream
            error = event.error or DocqaError(event.text or "generation failed")
            yield _data({"error": {"message": str(error), "type": type(error).__name__}})
        reason, counts = _ending(event)
        yield _data({**head, "choices": [_choice("", reason)], **({"usage": counts} if usage else {})})
    yield "data: [DONE]\n\n"


def _ending(event: GenEvent) -> tuple[str, dict[str, int]]:
    reason = "error" if event.kind == "failed" else event.finish_reason
    counts = {
        "prompt_tokens": event.prompt_tokens,
        "completion_tokens": event.completion_tokens,
        "total_tokens": event.prompt_tokens + event.completion_tokens,
    }
    return reason, counts


def _choice(text: str, reason: str | None) -> dict[str, Any]:
    return {"index": 0, "text": text, "finish_reason": reason, "logprobs": None}


def _data(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"
