"""Turning a generator's raw text stream into docqa's answer events and final Answer.

The same builder serves the CLI (sync iteration), the library and the API (async iteration), so
the reasoning/answer split, timings and citations are computed in one place.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from docqa.answering.citing import best_page, cited_numbers, section_of
from docqa.answering.prompting import PromptPlan
from docqa.answering.runaway import RunawayWatch, looped, without_repeats
from docqa.answering.support import claims_for, supporting_passage
from docqa.answering.thinking import Channel, ThinkSplitter
from docqa.core.errors import DocqaError
from docqa.core.events import (
    AnswerDelta,
    AskEvent,
    CitationsEvent,
    DoneEvent,
    ErrorEvent,
    ProgressEvent,
    ReasoningDelta,
)
from docqa.core.streams import GenEvent
from docqa.core.types import Answer, Citation, Mode, RetrievedChunk, Timings

NO_SOURCES_ANSWER = "The documents in this collection do not answer the question: nothing relevant was found."


def citations_for(plan: PromptPlan) -> list[Citation]:
    return [
        Citation(
            number=s.number,
            document=s.chunk.document_name,
            document_id=s.chunk.document_id,
            pages=(s.chunk.first_page, s.chunk.last_page),
            chunk_id=s.chunk.chunk_id,
            score=s.chunk.score,
            section=section_of(s.chunk, None),
            ocr=bool(s.chunk.ocr_pages),
        )
        for s in plan.sources
    ]


class AnswerBuilder:
    def __init__(
        self,
        mode: Mode,
        plan: PromptPlan,
        started: float,
        retrieval_ms: float,
        warnings: tuple[str, ...] = (),
        scope: str = "lookup",
    ) -> None:
        self.mode = mode
        self.scope = scope
        self.documents_read = 0  # set by a reading of whole documents (docqa.service.reading_run)
        self.warnings = warnings
        self.citations = citations_for(plan)
        self._plan = plan
        self._started = started
        self._splitter = ThinkSplitter()
        self._answer: list[str] = []
        self._reasoning: list[str] = []
        self.timings = Timings(retrieval_ms=retrieval_ms, prompt_tokens=plan.prompt_tokens)
        self.finish_reason = "stop"
        self.error: str | None = None
        self.failure: DocqaError | None = None  # the domain error behind `error`, where the generator gave one
        self.done = False  # the answer has ended here: its generator's stream is to be cancelled
        self._watch = RunawayWatch()
        self._pieces = 0

    def opening(self) -> AskEvent:
        return CitationsEvent(list(self.citations), self.mode, self.warnings, self.scope)

    def on_event(self, event: GenEvent) -> list[AskEvent]:
        if self.done:  # ended here (a runaway): what the generator sends before it sees the cancel is dropped
            return []
        if event.kind == "progress":
            return [ProgressEvent(event.prompt_tokens, event.prompt_done)]
        if event.kind == "text":
            if self.timings.ttft_ms is None:
                self.timings.ttft_ms = (time.perf_counter() - self._started) * 1000
            self._pieces += 1
            out = self._route(self._splitter.feed(event.text))
            if self._watch.feed(event.text):  # blank lines or one phrase over and over: end it here
                out += self.on_event(GenEvent("finished", finish_reason="repetition", completion_tokens=self._pieces))
                if self._watch.unit:  # the answer kept (JSON, the OpenAI routes) holds the phrase once
                    self._answer = [without_repeats("".join(self._answer), self._watch.unit)]
            return out
        self.done = True
        out = self._route(self._splitter.finish())
        self.timings.total_ms = (time.perf_counter() - self._started) * 1000
        if event.kind == "failed":
            self.error = event.text
            self.failure = event.error
            self.finish_reason = "error"
            return [*out, ErrorEvent(event.text, event.error)]
        self.finish_reason = event.finish_reason
        if self.finish_reason == "length" and looped("".join(self._answer)):  # a loop with small changes
            self.finish_reason = "repetition"
        self.timings.prompt_tokens = event.prompt_tokens or self.timings.prompt_tokens
        self.timings.completion_tokens = event.completion_tokens
        self._refine_citations()
        return [*out, DoneEvent(replace(self.timings), self.finish_reason, list(self.citations))]

    def _refine_citations(self) -> None:
        answer = "".join(self._answer)
        cited = cited_numbers(answer)
        chunks = {s.number: s.chunk for s in self._plan.sources}
        self.citations = [self._refined(c, answer, chunks[c.number], cited) for c in self.citations]

    def _refined(self, citation: Citation, answer: str, chunk: RetrievedChunk, cited: set[int]) -> Citation:
        """The citation once the answer says what it took from its source: the page of the passage that
        supports it (else the page sharing most of the answer's terms) and that passage."""
        support = supporting_passage(claims_for(answer, citation.number, cited), chunk)
        page = support.page if support else best_page(answer, chunk)
        if page is None:
            return replace(citation, cited=citation.number in cited)
        return replace(
            citation,
            page=page,
            cited=citation.number in cited,
            section=section_of(chunk, page, support.quote if support else None),
            ocr=page in chunk.ocr_pages,
            quote=support.quote if support else None,
        )

    def _route(self, parts: Sequence[tuple[Channel, str]]) -> list[AskEvent]:
        events: list[AskEvent] = []
        for channel, text in parts:
            (self._reasoning if channel == "reasoning" else self._answer).append(text)
            events.append(ReasoningDelta(text) if channel == "reasoning" else AnswerDelta(text))
        return events

    def result(self) -> Answer:
        return Answer(
            answer="".join(self._answer).strip(),
            reasoning="".join(self._reasoning).strip(),
            mode=self.mode,
            citations=self.citations,
            timings=self.timings,
            finish_reason=self.finish_reason,
            warnings=list(self.warnings),
            scope=self.scope,
            documents_read=self.documents_read,
        )
