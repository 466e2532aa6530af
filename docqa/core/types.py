"""Plain data passed between pipeline stages."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Page:
    number: int  # 1-based
    text: str
    ocr: bool = False  # read from the page's image by OCR, not from a text layer


@dataclass(frozen=True)
class ParsedDocument:
    pages: list[Page]
    warnings: list[str] = field(default_factory=list)
    # the title the file declares (HTML's <title>, Word's and PowerPoint's title property, an email's Subject),
    # which names the document over the first line of its text
    title: str | None = None


@dataclass(frozen=True)
class ChunkDraft:
    """A chunk before it has an ID: text plus where it sits in the document's joined text."""

    ordinal: int
    text: str
    char_start: int
    char_end: int
    first_page: int
    last_page: int
    n_tokens: int
    # (offset in text, page number) for every page that starts inside this chunk after its first
    page_breaks: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class RetrievedChunk:
    chunk_id: int
    document_id: int
    document_name: str
    ordinal: int
    text: str
    first_page: int
    last_page: int
    score: float  # fused score: higher is better
    page_breaks: tuple[tuple[int, int], ...] = ()
    ocr_pages: tuple[int, ...] = ()  # its pages that OCR read (their text may hold OCR's errors)


@dataclass(frozen=True)
class Citation:
    number: int  # the [n] label the prompt gave this source
    document: str
    document_id: int
    pages: tuple[int, int]
    chunk_id: int
    score: float
    page: int | None = None  # the page of the range that best matches the answer, once there is one
    cited: bool = False  # the answer refers to this source as [number]
    section: str | None = None  # the heading over that page (or over the range's start), if one was found
    ocr: bool = False  # that page (or, before the answer, any page of the range) was read by OCR
    quote: str | None = None  # the source's passage that supports the answer (answering.support), once known

    def as_dict(self) -> dict[str, object]:
        return {
            "number": self.number,
            "document": self.document,
            "document_id": self.document_id,
            "pages": list(self.pages),
            "page": self.page,
            "cited": self.cited,
            "section": self.section,
            "ocr": self.ocr,
            "quote": self.quote,
            "chunk_id": self.chunk_id,
            "score": round(self.score, 6),
        }


@dataclass
class Timings:
    retrieval_ms: float = 0.0
    ttft_ms: float | None = None
    total_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "retrieval_ms": round(self.retrieval_ms, 1),
            "ttft_ms": None if self.ttft_ms is None else round(self.ttft_ms, 1),
            "total_ms": round(self.total_ms, 1),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


Mode = Literal["thinking", "non-thinking"]


@dataclass
class Answer:
    answer: str
    reasoning: str
    mode: Mode
    citations: list[Citation]
    timings: Timings
    finish_reason: str = "stop"
    cached: bool = False  # replayed from the answer cache: its token counts are the original answer's
    warnings: list[str] = field(default_factory=list)  # what the user should know (thinking asked, not possible)
    scope: str = "lookup"  # what the question was read as: lookup | document | compare | collection
    documents_read: int = 0  # documents (or a long document's parts) read for it; 0: a lookup's top chunks

    def as_dict(self) -> dict[str, object]:
        return {
            "answer": self.answer,
            "scope": self.scope,
            "documents_read": self.documents_read,
            "reasoning": self.reasoning,
            "mode": self.mode,
            "citations": [c.as_dict() for c in self.citations],
            "timings": self.timings.as_dict(),
            "finish_reason": self.finish_reason,
            "cached": self.cached,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class GeneratorInfo:
    model_id: str
    n_ctx: int
    prompt_format: str  # qwen3 | chatml | gemma | plain
    parallel: int = 1  # requests generated at once (the batching engine: the sequences its memory fit kept)
    on_cpu: bool = False  # in-process llama.cpp with no layer on a GPU: the CPU defaults apply (settings)

    @property
    def can_think(self) -> bool:
        """Only Qwen3's template has a thinking switch; other models answer without a <think> block."""
        return self.prompt_format == "qwen3"


@dataclass(frozen=True)
class GeneratorStats:
    """A generator's state for /health and /metrics. `kind` names the generator; the KV figures are
    the batching engine's (None where a generator has no such thing, and left out of as_dict)."""

    kind: str  # batching | serial
    running: int = 0
    waiting: int = 0
    kv_cells: int | None = None
    kv_cells_asked: int | None = None  # more than kv_cells: cut to fit the GPU
    context_tokens: int | None = None  # what one request's prompt and answer may use
    parallel_sequences: int | None = None  # fewer than DOCQA_LLM_N_PARALLEL: cut to fit the GPU
    cached_prompt_slots: int | None = None
    kv_cache_bytes: int | None = None
    kv_cells_in_sequences: int | None = None
    prefix_cache_tokens: int | None = None
    prompt_tokens_reused: int | None = None
    sampling_on_backend: int | None = None

    def as_dict(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if v is not None}
