"""Reading the planned prompts of a question over many documents (or many parts of one) at once, then
writing its answer: the same events as any answer (citations first, then reading progress, the answer's
text, done), so every interface shows it as it shows a lookup.

Every prompt is submitted to the generator as soon as it is planned (the engine reads the first documents
while the last are planned), up to a window (twice the engine's parallel
sequences unless `reading.in_flight` says otherwise) so that the engine always has the next prompt
queued while it stays open to other users' questions; a full queue is waited out, not failed. Stopping the
reader (a client gone, Stop in the page, Ctrl+C) cancels every prompt still read or queued.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from docqa.answering.builder import AnswerBuilder, citations_for
from docqa.answering.cache import CacheKey
from docqa.answering.prompting import PLAIN_STOPS, PromptPlan
from docqa.answering.reading import (
    COMPARE_REQUEST,
    NOT_STATED,
    Finding,
    cited_numbers,
    findings_table,
    fit_notes,
    numbered,
    renumber,
)
from docqa.core.errors import BusyError, DocqaError
from docqa.core.events import AnswerDelta, AskEvent, CitationsEvent, DoneEvent, ErrorEvent, ReadingEvent
from docqa.core.protocols import Generator
from docqa.core.sampling_params import SamplingParams
from docqa.core.streams import GenerationStream
from docqa.core.types import Answer, Citation, Mode, Timings
from docqa.service.asking import Asker, cancel_submitted
from docqa.service.status import AnswerOutcome

BUSY_RETRY_S = 0.25  # how often a reader whose every prompt the full queue refused tries again
BUSY_WAIT_S = 120.0  # how long it waits so before it says busy itself


@dataclass(frozen=True)
class Part:
    """One document (or one part of a long document) to read: its prompt, or None where its search found
    none of the question's words (not stated, the model not asked)."""

    label: str
    document_id: int
    plan: PromptPlan | None


@dataclass(frozen=True)
class ReadingPlan:
    scope: str
    question: str
    mode: Mode
    parts: list[Future[Part]]  # planned side by side in threads: each read as soon as it is planned
    label: str  # "documents" or "parts"
    finding_params: SamplingParams
    compose_params: SamplingParams
    warnings: tuple[str, ...]
    started: float
    retrieval_ms: float
    in_flight: int | None = None


def planned(part: Part) -> Future[Part]:
    """A part planned already (a long document's parts, made at once), as the plan holds it."""
    future: Future[Part] = Future()
    future.set_result(part)
    return future


class ReadingRun:
    """One question over many documents, from its plan to its answer (the interface of AskRun)."""

    def __init__(self, asker: Asker, key: CacheKey | None, plan: ReadingPlan, document_name: str | None = None) -> None:
        self._asker = asker
        self._key = key
        self._plan = plan
        self._document_name = document_name
        self._parts: list[Part | None] = [None] * len(plan.parts)  # each as its planning ends
        self._builders: list[AnswerBuilder | None] = [None] * len(plan.parts)
        self._citations: list[Citation] = []
        self._numbers: list[dict[int, int]] = []
        self._read = 0
        self._streams: list[GenerationStream] = []
        self._busy_since: float | None = None
        self._text: list[str] = []
        self._timings = Timings(retrieval_ms=plan.retrieval_ms)
        self._finish_reason = "stop"
        self._failure: DocqaError | None = None
        self._error: str | None = None
        self._warnings = list(plan.warnings)

    # --- the AskRun interface ----------------------------------------------------------------------

    def events(self) -> Iterator[AskEvent]:
        """The events read from a thread: the reading runs on a private event loop, one step per event."""
        loop = asyncio.new_event_loop()
        events = self.aevents()
        try:
            while True:
                try:
                    yield loop.run_until_complete(events.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            loop.run_until_complete(events.aclose())  # a reader gone early cancels every prompt
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    async def aevents(self) -> AsyncGenerator[AskEvent, None]:
        plan = self._plan
        async for progress in self._read_all():
            yield progress
        findings = self._findings() if self._error is None else []  # else a part's planning failed
        if self._error is not None:
            yield ErrorEvent(self._error, self._failure)
            return
        async for event in self._write(findings):
            yield event
        if self._error is not None:
            yield ErrorEvent(self._error, self._failure)
            return
        self._timings.total_ms = (time.perf_counter() - plan.started) * 1000
        self._refine(findings)
        yield DoneEvent(replace(self._timings), self._finish_reason, list(self._citations))
        await asyncio.to_thread(self._finish)

    def prompts(self) -> list[tuple[tuple[int, ...], str]]:
        """The prompts of its parts, each with its document (the composing prompt is written from their answers)."""
        parts = [f.result() for f in self._plan.parts]
        return [((p.document_id,), p.plan.prompt) for p in parts if p.plan is not None]

    def answer(self) -> Answer:
        if self._error is not None:
            raise self._failure or DocqaError(self._error)
        return Answer(
            answer="".join(self._text).strip(),
            reasoning="",
            mode=self._plan.mode,
            citations=self._citations,
            timings=self._timings,
            finish_reason=self._finish_reason,
            warnings=self._warnings,
            scope=self._plan.scope,
            documents_read=len(self._plan.parts),
        )

    # --- reading every part ------------------------------------------------------------------------

    async def _read_all(self) -> AsyncIterator[AskEvent]:
        """Each part's prompt submitted as soon as it is planned (up to the window), its progress yielded
        as it is read; the citations first, once every part is planned (their numbers follow the parts'
        order), the progress of parts read before that held back until then."""
        planning: dict[asyncio.Future[Any], int] = {asyncio.wrap_future(f): i for i, f in enumerate(self._plan.parts)}
        ready: deque[int] = deque()
        running: dict[asyncio.Future[Any], int] = {}
        held: list[AskEvent] = []
        try:
            while planning or ready or running:
                busy = await self._submit_ready(ready, running)
                waits = set(planning) | set(running)
                if not waits:  # the queue is full of others' requests: tried again in a while
                    await asyncio.sleep(BUSY_RETRY_S)
                    continue
                timeout = BUSY_RETRY_S if busy and not running else None
                done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if task in planning:
                        i = planning.pop(task)
                        if (failure := task.exception()) is not None:
                            self._fail_planning(failure)
                            return
                        if self._planned(i, task.result()):
                            ready.append(i)
                        else:
                            held.append(self._progress(i))
                        if not planning:
                            held.insert(0, self._all_planned())
                    else:
                        i = running.pop(task)
                        task.result()
                        held.append(self._progress(i))
                if not planning:
                    for event in held:
                        yield event
                    held = []
        finally:
            for future in self._plan.parts:
                future.cancel()
            for task in running:
                task.cancel()
            for stream in self._streams:
                stream.cancel()

    async def _submit_ready(self, ready: deque[int], running: dict[asyncio.Future[Any], int]) -> bool:
        """The planned prompts submitted while the window has room; True where the generator's full queue
        refused one (past BUSY_WAIT_S with nothing of this question running: BusyError)."""
        generator = self._asker.generator
        assert generator is not None
        window = self._plan.in_flight or max(1, generator.info.parallel) * 2
        while ready and len(running) < window:
            try:
                stream = await self._submit(ready[0])
            except BusyError:
                self._busy_since = self._busy_since or time.monotonic()
                if not running and time.monotonic() - self._busy_since > BUSY_WAIT_S:
                    raise
                return True
            self._busy_since = None
            i = ready.popleft()
            self._streams.append(stream)
            running[asyncio.ensure_future(self._consume(i, stream))] = i
        return False

    def _fail_planning(self, failure: BaseException) -> None:
        """A part's planning failed: the question fails with its error (a domain error as said; a fault raised)."""
        if not isinstance(failure, DocqaError):
            raise failure
        self._error, self._failure = str(failure), failure

    def _planned(self, i: int, part: Part) -> bool:
        """A part's plan taken in: True where it has a prompt to read."""
        self._parts[i] = part
        if part.plan is None:
            return False
        self._builders[i] = AnswerBuilder("non-thinking", part.plan, self._plan.started, 0.0)
        return True

    def _all_planned(self) -> CitationsEvent:
        """Every part planned: the sources numbered in the parts' order, planning's time kept."""
        self._timings.retrieval_ms = (time.perf_counter() - self._plan.started) * 1000
        for part in self._resolved():
            local = citations_for(part.plan) if part.plan is not None else []
            global_, numbers = numbered(local, len(self._citations) + 1)
            self._citations += global_
            self._numbers.append(numbers)
        plan = self._plan
        return CitationsEvent(list(self._citations), plan.mode, plan.warnings, plan.scope)

    def _progress(self, i: int) -> ReadingEvent:
        self._read += 1
        part, builder = self._parts[i], self._builders[i]
        assert part is not None
        found = builder is not None and builder.error is None and _found(builder)
        return ReadingEvent(self._read, len(self._parts), part.label, found)

    def _resolved(self) -> list[Part]:
        parts = [p for p in self._parts if p is not None]
        assert len(parts) == len(self._parts), "every part is planned before it is used"
        return parts

    async def _submit(self, i: int) -> GenerationStream:
        part = self._parts[i]
        assert part is not None and part.plan is not None and self._asker.generator is not None
        plan = part.plan
        params = self._plan.finding_params
        params = replace(params, stop=(*params.stop, *plan.stop))
        return await _submitted(self._asker.generator, plan.prompt, params)

    async def _consume(self, i: int, stream: GenerationStream) -> None:
        builder = self._builders[i]
        assert builder is not None
        try:
            async for event in stream:
                builder.on_event(event)
                if builder.done:
                    break
        finally:
            stream.cancel()
        self._count(builder)

    def _count(self, builder: AnswerBuilder) -> None:
        """A prompt's tokens and what it generated (a finding stopped at a repetition: the tokens it had)."""
        self._timings.prompt_tokens += builder.timings.prompt_tokens
        self._timings.completion_tokens += builder.timings.completion_tokens

    def _findings(self) -> list[Finding]:
        """Each part's finding, numbered as the answer numbers its sources; a part the generator failed on is
        named as not read (every part failed: the question fails with the first one's error)."""
        findings = []
        failed = []
        for part, builder, numbers in zip(self._resolved(), self._builders, self._numbers, strict=True):
            if builder is None:
                findings.append(Finding(part.label, part.document_id, NOT_STATED, ()))
                continue
            if builder.error is not None:
                failed.append((part.label, builder))
                findings.append(Finding(part.label, part.document_id, f"{NOT_STATED} (not read: an error)", ()))
                continue
            answer = builder.result()
            citations = tuple(replace(c, number=numbers[c.number]) for c in answer.citations)
            findings.append(Finding(part.label, part.document_id, renumber(answer.answer, numbers), citations))
        if failed and len(failed) == sum(b is not None for b in self._builders):
            self._error = failed[0][1].error
            self._failure = failed[0][1].failure
        elif failed:
            self._warnings.append(f"{len(failed)} could not be read: " + "; ".join(label for label, _ in failed))
        return findings

    # --- writing the answer ------------------------------------------------------------------------

    async def _write(self, findings: list[Finding]) -> AsyncIterator[AskEvent]:
        scope = self._plan.scope
        if scope in ("collection", "compare"):
            table = findings_table(findings, documents=self._plan.label)
            self._first_answer()
            self._text.append(table)
            yield AnswerDelta(table)
            if scope == "collection" or sum(f.found for f in findings) < 1:
                return
            self._text.append("\n\n")
            yield AnswerDelta("\n\n")
            request = f"{COMPARE_REQUEST}: {self._plan.question}"
        else:
            if not any(f.found for f in findings):
                text = f"None of the {len(findings)} parts of {self._document_name} bears on this."
                self._text.append(text)
                yield AnswerDelta(text)
                return
            request = self._plan.question
        async for event in self._compose(request, findings):
            yield event

    async def _compose(self, request: str, findings: list[Finding]) -> AsyncIterator[AskEvent]:
        """The model's answer written from the findings, streamed as a lookup's answer is."""
        generator = self._asker.generator
        assert generator is not None
        info = generator.info
        params = self._plan.compose_params
        budget = info.n_ctx - params.max_tokens
        thinking = self._plan.mode == "thinking"
        prompt, n = fit_notes(info.prompt_format, request, findings, thinking, generator.count_tokens, budget)
        stop = PLAIN_STOPS if info.prompt_format == "plain" else ()
        builder = AnswerBuilder(self._plan.mode, PromptPlan(prompt, [], n, stop), self._plan.started, 0.0)
        params = replace(params, stop=(*params.stop, *stop))
        stream = await _submitted(generator, prompt, params)
        try:
            async for gen_event in stream:
                for event in builder.on_event(gen_event):
                    if isinstance(event, AnswerDelta):
                        self._timings.ttft_ms = (
                            self._timings.ttft_ms or (time.perf_counter() - self._plan.started) * 1000
                        )
                        yield event
                    elif event.kind == "reasoning":
                        yield event
                if builder.done:
                    break
        finally:
            stream.cancel()
        self._count(builder)
        if builder.error is not None:
            self._error, self._failure = builder.error, builder.failure
            return
        if builder.finish_reason != "stop":  # cut at its limit, or stopped at a repetition
            self._finish_reason = builder.finish_reason
        self._text.append(builder.result().answer)  # as kept: without the repeats a runaway cut

    def _first_answer(self) -> None:
        if self._timings.ttft_ms is None:
            self._timings.ttft_ms = (time.perf_counter() - self._plan.started) * 1000

    def _refine(self, findings: list[Finding]) -> None:
        """The answer's citations as its findings refined them (page, passage), marked where the answer cites."""
        by_number = {c.number: c for f in findings for c in f.citations}
        cited = cited_numbers("".join(self._text))
        self._citations = [replace(by_number.get(c.number, c), cited=c.number in cited) for c in self._citations]

    def _finish(self) -> None:
        answer = self.answer()
        if self._key is not None:
            self._asker.answer_cache.put(self._key, answer)
        self._asker.notify(AnswerOutcome(answer.mode, False, answer.timings, answer.finish_reason))


async def _submitted(generator: Generator, prompt: str, params: SamplingParams) -> GenerationStream:
    """generator.submit in a worker thread (an endpoint's waits for its server's headers); a reader stopped
    meanwhile cancels the stream once it is there, so no prompt is left generating for nobody."""
    loop = asyncio.get_running_loop()
    submitting: asyncio.Future[GenerationStream | None] = loop.run_in_executor(
        None, generator.submit, prompt, params, loop
    )
    try:
        stream = await asyncio.shield(submitting)
    except asyncio.CancelledError:
        submitting.add_done_callback(cancel_submitted)
        raise
    assert stream is not None
    return stream


def _found(builder: AnswerBuilder) -> bool:
    return Finding("", 0, builder.result().answer, ()).found
