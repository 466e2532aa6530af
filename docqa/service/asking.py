"""The one path every question takes, whichever interface asked it: look the answer up in the cache,
or retrieve, build the prompt, queue it on the generator and turn its text into typed answer events.

`DocQA.ask`, `stream` and `astream` all drive an `AskRun`; only the last step differs (reading the
generator's stream from a thread or from the event loop).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial

from docqa.answering import focus, packing, windows
from docqa.answering.builder import NO_SOURCES_ANSWER, AnswerBuilder
from docqa.answering.cache import AnswerCache, CacheKey, cache_key, replay
from docqa.answering.prompting import PromptPlan, build_prompt, source_tag_tokens
from docqa.core.errors import ConfigError, DocqaError, InvalidRequestError, NoDocumentMatchesError
from docqa.core.events import AskEvent
from docqa.core.protocols import Generator
from docqa.core.query import Query
from docqa.core.requests import MAX_QUESTION_CHARS, AskRequest, storable
from docqa.core.sampling_params import NON_THINKING_SAMPLING, THINKING_SAMPLING, SamplingParams
from docqa.core.settings import CPU_MAX_TOKENS, CPU_PROMPT_BUDGET, GPU_MAX_TOKENS, Settings
from docqa.core.streams import GenerationStream, GenEvent
from docqa.core.types import Answer, Mode, RetrievedChunk
from docqa.retrieval.retriever import Retriever
from docqa.service.status import AnswerOutcome
from docqa.store import catalog
from docqa.store.models import CollectionRow
from docqa.store.protocol import Store

# What a question with no sources "generates": a fixed answer, through the same builder as any other.
_NO_SOURCES = (GenEvent("text", text=NO_SOURCES_ANSWER), GenEvent("finished", finish_reason="no_sources"))


@dataclass(frozen=True)
class Prepared:
    mode: Mode
    plan: PromptPlan
    params: SamplingParams
    started: float
    retrieval_ms: float
    warnings: tuple[str, ...] = ()
    scope: str = "lookup"  # a whole document read in one prompt is a `document` answer (docqa.service.reading)
    documents_read: int = 0


def no_thinking_warning(model_id: str) -> str:
    return f"{model_id} has no thinking mode (only Qwen3 models do): answered without thinking"


def check(request: AskRequest) -> None:
    """A question docqa can ask: not empty, not too long, Unicode text (JSON can carry a lone surrogate,
    "\\ud800", that no encoder, the cache's hash or the tokenizer, can write)."""
    question = request.question.strip()
    if not question:
        raise InvalidRequestError("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidRequestError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
    for text in (question, *request.earlier):
        storable(text, "the question")  # kept in the cache and conversations: refused before any work


BUDGET_SOURCES = 6  # where a prompt budget cuts, at most this many runs of paragraphs (chosen on half A: reading.md)


class Asker:
    """What answering needs of the service, held in one place: settings, store, retriever, cache and
    generator; `notify` hears of every finished answer (metrics)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        retriever: Retriever,
        answer_cache: AnswerCache,
        generator: Generator | None,
        collection: Callable[[str | None], CollectionRow],
        notify: Callable[[AnswerOutcome], None],
    ) -> None:
        self.settings = settings
        self.store = store
        self.retriever = retriever
        self.answer_cache = answer_cache
        self.generator = generator
        self.collection = collection
        self.notify = notify

    def start(self, request: AskRequest) -> AskRun:
        """The cached answer, or retrieval and the prompt done (blocking: from async code, in a thread)."""
        started = time.perf_counter()
        check(request)
        key = self.cache_key(request)
        cached = self.cached(key)
        if cached is not None:
            return AskRun(self, key, started, cached=cached)
        return AskRun(self, key, started, prepared=self._prepare(request))

    def cached(self, key: CacheKey | None) -> Answer | None:
        return self.answer_cache.get(key) if key else None

    def within(self, coll: CollectionRow, where: Sequence[tuple[str, str]]) -> list[int]:
        """The ready documents a catalog filter selects; none is an error that says which condition matched
        nothing and what the collection holds instead (a misspelled field, a company it does not have)."""
        found = self.store.documents_where(coll.id, where)
        if found:
            return found
        entries = [json.loads(d.catalog or "{}") for d in self.store.documents(coll.id) if d.status == "ready"]
        why = catalog.why_none_match(entries, where) if entries else "the collection has no ready document"
        raise NoDocumentMatchesError(coll.name, why or "no ready document meets it")

    def _prepare(self, request: AskRequest) -> Prepared:
        if self.generator is None:
            raise ConfigError("no generator loaded: open DocQA with generator=True to ask questions")
        question = request.question.strip()
        started = time.perf_counter()
        coll = self.collection(request.collection)
        if request.document_id is not None:
            self.store.document(coll, request.document_id)  # 404 for another collection's document
        top_k = request.top_k or self.settings.retrieval.top_k
        earlier = request.follows()
        within = self.within(coll, request.where) if request.where else None
        # read once, for the search and the windows
        query = self.retriever.understand(coll, request.search_text(), scoped=request.document_id is not None)
        ranked = self.retriever.retrieve(
            coll, request.search_text(), top_k, request.document_id, document_ids=within, query=query
        )
        retrieval_ms = (time.perf_counter() - started) * 1000
        max_tokens = self.max_tokens(request)
        mode, base, warnings = self.sampling(request)
        sources = windows.centred(
            query,
            ranked,
            self.store.adjacent_chunks,
            self.store.best_passage,
            self.generator.count_tokens,
            self.settings.chunking.max_tokens,
        )
        budget = self.prompt_budget()
        if budget is not None:
            sources = self.fit_to_budget(query, sources, budget)
        plan = build_prompt(
            question=question,
            ranked=sources,
            prompt_format=self.generator.info.prompt_format,
            thinking=mode == "thinking",
            n_ctx=self.generator.info.n_ctx,
            max_tokens=max_tokens,
            count_tokens=self.generator.count_tokens,
            earlier=earlier,
        )
        params = self.params(request, base, max_tokens, plan.stop, thinking=mode == "thinking")
        return Prepared(mode, plan, params, started, retrieval_ms, warnings)

    def fit_to_budget(self, query: Query, sources: list[RetrievedChunk], budget: int) -> list[RetrievedChunk]:
        """Sources that fit a prompt budget (a CPU's): kept whole where they do, else their best paragraphs
        for the question within it (docqa.answering.packing, as a collection question packs one document), in
        at most BUDGET_SOURCES runs grown with the paragraphs beside them, tags counted; else, where no paragraph
        holds the question's words, each cut around its best passage. A window around each source's best passage
        lost the clause that answers where the passage was not the clause's (docs/benchmarks/reading.md)."""
        assert self.generator is not None
        count = self.generator.count_tokens
        if sum(count(s.text) for s in sources) <= budget:
            return sources
        weights = self.store.term_weights(query)
        found = packing.packable(sources, weights, count, partial(self._stored_passages, query))
        tags = source_tag_tokens(sources[0].document_name, count)
        packed = packing.take(found, budget, count, tags, budget, widen=True, most_sources=BUDGET_SOURCES)
        if packed:
            return packed
        return focus.windows(query, list(sources), self.store.best_passage, count, budget)

    def _stored_passages(self, query: Query, chunk: RetrievedChunk) -> list[tuple[int, float]]:
        """The search's passages of a source's stored chunk, where the source is that chunk's text (a prompt
        window, re-cut from pages, is not: its passages would point elsewhere in it)."""
        return [] if chunk.page_breaks else self.store.ranked_passages(query, chunk)

    def sampling(self, request: AskRequest) -> tuple[Mode, SamplingParams, tuple[str, ...]]:
        """The mode the answer is generated in, its sampling, and the warning where thinking was asked of a
        model that cannot think."""
        assert self.generator is not None
        info = self.generator.info
        thinking = request.thinking and info.can_think
        warnings = () if thinking == request.thinking else (no_thinking_warning(info.model_id),)
        base = THINKING_SAMPLING if thinking else NON_THINKING_SAMPLING
        if info.prompt_format == "plain":
            # A base model on a completion prompt: Qwen's chat sampling does not apply; greedy reads best.
            base = replace(base, temperature=0.0)
        if request.temperature is not None:
            base = replace(base, temperature=request.temperature)
        return ("thinking" if thinking else "non-thinking"), base, warnings

    def params(
        self, request: AskRequest, base: SamplingParams, max_tokens: int, stop: tuple[str, ...], *, thinking: bool
    ) -> SamplingParams:
        return replace(
            base,
            max_tokens=max_tokens,
            seed=request.seed if request.seed is not None else self.settings.llm.seed,
            stop=() if request.ignore_eos else (*stop, *request.stop),
            thinking_budget=self._thinking_budget(request) if thinking else None,
            ignore_eos=request.ignore_eos,
        )

    def prompt_budget(self) -> int | None:
        """Tokens of document text a prompt may hold: the setting, else the CPU's default; None: no cut."""
        on_cpu = self.generator is not None and self.generator.info.on_cpu
        return self.settings.llm.prompt_budget or (CPU_PROMPT_BUDGET if on_cpu else None)

    def max_tokens(self, request: AskRequest) -> int:
        explicit = request.max_tokens or self.settings.llm.max_tokens
        if explicit:
            return explicit
        on_cpu = self.generator is not None and self.generator.info.on_cpu
        return CPU_MAX_TOKENS if on_cpu else GPU_MAX_TOKENS

    def _thinking_budget(self, request: AskRequest) -> int | None:
        return request.thinking_budget if request.thinking_budget is not None else self.settings.llm.thinking_budget

    def cache_key(
        self, request: AskRequest, scope: str = "lookup", document_ids: tuple[int, ...] = ()
    ) -> CacheKey | None:
        """Where this question's answer is cached (None: it is not); a reading of whole documents is keyed
        on its scope and the documents it read as well."""
        if not (self.settings.answer_cache and request.use_cache) or request.ignore_eos or request.stop:
            return None
        if self.generator is None:
            return None
        collection_id = self.collection(request.collection).id
        return cache_key(
            collection_id,
            request.question,
            thinking=request.thinking,  # as asked: its answer carries the warning when the model cannot think
            model_id=self.generator.info.model_id,
            top_k=request.top_k or self.settings.retrieval.top_k,
            document_id=request.document_id,
            where=request.where,
            max_tokens=self.max_tokens(request),
            temperature=request.temperature,
            seed=request.seed,
            retrieval=self.retriever.signature(),
            earlier=(earlier,) if (earlier := request.follows()) else (),
            generation=self.store.generation(collection_id),  # read before retrieval, checked when cached
            prompt_budget=self.prompt_budget(),
            thinking_budget=self._thinking_budget(request) if request.thinking else None,
            scope=scope,
            document_ids=document_ids,
            asker=request.asker,
        )


class AskRun:
    """One question from its start to its answer: replayed from the cache, or generated."""

    def __init__(
        self,
        asker: Asker,
        key: CacheKey | None,
        started: float,
        *,
        cached: Answer | None = None,
        prepared: Prepared | None = None,
    ) -> None:
        self._asker = asker
        self._key = key
        self._started = started
        self._cached = cached
        self._prepared = prepared
        self._builder = (
            AnswerBuilder(
                prepared.mode, prepared.plan, prepared.started, prepared.retrieval_ms, prepared.warnings, prepared.scope
            )
            if prepared
            else None
        )
        if self._builder is not None and prepared is not None:
            self._builder.documents_read = prepared.documents_read

    def events(self) -> Iterator[AskEvent]:
        """Answer events as they are generated, read from a thread: citations, deltas, then done."""
        if self._builder is None:
            yield from self._replay()
            return
        stream = self._submit()
        try:
            yield self._builder.opening()
            for gen_event in stream if stream is not None else _NO_SOURCES:
                yield from self._builder.on_event(gen_event)
                if self._builder.done:  # ended by the builder (a runaway) or by the generator
                    break
        finally:
            if stream is not None:  # a reader that stops early frees the sequence at the next step
                stream.cancel()
        self._finish()

    async def aevents(self) -> AsyncIterator[AskEvent]:
        """The same events, the generator's tokens arriving on the running event loop."""
        if self._builder is None:
            for event in self._replay():
                yield event
            return
        stream = await self._submit_off_loop()
        try:
            yield self._builder.opening()
            if stream is None:
                for gen_event in _NO_SOURCES:
                    for event in self._builder.on_event(gen_event):
                        yield event
            else:
                async for gen_event in stream:
                    for event in self._builder.on_event(gen_event):
                        yield event
                    if self._builder.done:
                        break
        finally:
            if stream is not None:  # a client gone before its tokens frees the sequence at the next step
                stream.cancel()
        await asyncio.to_thread(self._finish)

    def prompts(self) -> list[tuple[tuple[int, ...], str]]:
        """The prompt this question sends, with the documents whose passages it holds (none: cached)."""
        if self._prepared is None:
            return []
        plan = self._prepared.plan
        return [(tuple(dict.fromkeys(s.chunk.document_id for s in plan.sources)), plan.prompt)]

    def answer(self) -> Answer:
        """The whole answer, once its events have been read; a generation that failed raises."""
        if self._cached is not None:
            return self._cached
        assert self._builder is not None
        if self._builder.error is not None:  # an endpoint's timeout stays a 504, its failure a 502
            raise self._builder.failure or DocqaError(self._builder.error)
        return self._builder.result()

    async def _submit_off_loop(self) -> GenerationStream | None:
        """_submit in a worker thread: an endpoint generator's submit waits for its server's response headers
        (their status decides a 429), and an event loop held there stalls every other answer it streams (a
        server that sends its headers with the first token held it for the whole prompt). A client gone
        meanwhile cancels the stream once it is there."""
        loop = asyncio.get_running_loop()
        submitting = loop.run_in_executor(None, self._submit, loop)
        try:
            return await asyncio.shield(submitting)
        except asyncio.CancelledError:
            submitting.add_done_callback(cancel_submitted)
            raise

    def _submit(self, loop: asyncio.AbstractEventLoop | None = None) -> GenerationStream | None:
        """Queue the prompt before any event goes out: a full queue raises BusyError while the API can
        still answer 429 (after a streamed answer's first event its status is 200). None: no sources."""
        prep = self._prepared
        assert prep is not None and self._asker.generator is not None
        if not prep.plan.sources:
            return None
        return self._asker.generator.submit(prep.plan.prompt, prep.params, loop=loop)

    def _replay(self) -> Iterator[AskEvent]:
        answer = self._cached
        assert answer is not None
        elapsed_ms = (time.perf_counter() - self._started) * 1000
        answer.timings.ttft_ms = answer.timings.total_ms = elapsed_ms
        yield from replay(answer, elapsed_ms)
        self._asker.notify(AnswerOutcome(answer.mode, True, answer.timings, answer.finish_reason))

    def _finish(self) -> None:
        assert self._builder is not None
        if self._builder.error is not None:
            return
        answer = self._builder.result()
        if self._key is not None:
            self._asker.answer_cache.put(self._key, answer)
        self._asker.notify(AnswerOutcome(answer.mode, False, answer.timings, answer.finish_reason))


def cancel_submitted(submitted: asyncio.Future[GenerationStream | None]) -> None:
    """A stream submitted for a client that went away while it was submitted: cancelled, so it frees its place."""
    if not submitted.cancelled() and submitted.exception() is None and (stream := submitted.result()) is not None:
        stream.cancel()
