"""docqa as a library: `DocQA.open()` loads what a caller needs, then ingest, ask, list and delete.

    from docqa import DocQA, AskRequest
    with DocQA.open() as qa:
        qa.ingest(["contracts/"])
        print(qa.ask(AskRequest("What is the notice period?")).answer)

The CLI and the REST API are thin layers over this class.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

import numpy as np

from docqa.answer_cache import AnswerCache, CacheKey, cache_key, replay
from docqa.answering import NO_SOURCES_ANSWER, AnswerBuilder
from docqa.consistency import ConsistencyReport, VectorIndexes
from docqa.errors import ChunkNotFoundError, ConfigError, DocqaError, InvalidRequestError
from docqa.generation import NON_THINKING_SAMPLING, THINKING_SAMPLING, Generator, SamplingParams, load_generator
from docqa.prompting import PromptPlan, build_prompt
from docqa.reranking import Reranker
from docqa.settings import Settings
from docqa.store import CollectionRow, DocumentRow, Store
from docqa.streams import GenerationStream, GenEvent
from docqa.types import Answer, AskEvent, Mode, RetrievedChunk, Timings
from ingest.embedding import Embedder
from ingest.pipeline import Ingestor, IngestReport, ProgressCallback, Source, collect_sources

logger = logging.getLogger(__name__)

_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_QUESTION_CHARS = 8000


def validate_collection_name(name: str) -> str:
    if not _COLLECTION_NAME.match(name):
        raise InvalidRequestError(f"invalid collection name '{name[:80]}': use 1-64 letters, digits, '.', '_' or '-'")
    return name


@dataclass(frozen=True)
class AskRequest:
    question: str
    collection: str | None = None
    thinking: bool = False
    top_k: int | None = None
    max_tokens: int | None = None
    document_id: int | None = None
    seed: int | None = None
    temperature: float | None = None  # None: the mode's recommended value (greedy for base models)
    use_cache: bool = True  # False: always generate, and leave the answer cache as it is
    ignore_eos: bool = False  # max_tokens whatever the model says: no EOS, no stop strings (benchmarks; not cached)
    # A conversation's earlier questions, oldest first: the last one steers retrieval and is shown to the
    # model, so that a follow-up ("and the governing law?") is read as the conversation means it.
    earlier: tuple[str, ...] = ()

    def follows(self) -> str:
        """The question this one follows (the last earlier one, trimmed), or "" for none: what steers its
        retrieval and prompt, and so what its cached answer is filed under (a blank one is no follow-up)."""
        return self.earlier[-1].strip()[:MAX_QUESTION_CHARS] if self.earlier else ""


@dataclass(frozen=True)
class AnswerOutcome:
    """What observers (metrics) learn of each finished answer."""

    mode: Mode
    cached: bool
    timings: Timings
    finish_reason: str


@dataclass(frozen=True)
class _Prepared:
    mode: Mode
    plan: PromptPlan
    params: SamplingParams
    started: float
    retrieval_ms: float


class DocQA:
    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        generator: Generator | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        self.generator = generator
        self.reranker = reranker
        self.store = Store(settings.database_path)
        self.indexes = VectorIndexes(self.store, settings.vectors_dir, settings.auto_repair)
        from docqa.retrieval import Retriever

        self.retriever = Retriever(self.store, self.indexes, embedder, settings.retrieval, reranker, settings.rerank)
        self.ingestor = Ingestor(self.store, self.indexes, embedder, settings.chunking, settings.ingest)
        self.answer_cache = AnswerCache(self.store, settings.answer_cache_entries)
        # Called once per finished answer and per ingest run (metrics hook in here).
        self.on_answer: list[Callable[[AnswerOutcome], None]] = []
        self.on_ingest: list[Callable[[IngestReport], None]] = []
        # The models open() loaded, which close() frees; models handed in belong to the caller.
        self._close_models: list[Callable[[], None]] = []

    @classmethod
    def open(cls, settings: Settings | None = None, *, embedder: bool = True, generator: bool = True) -> DocQA:
        """Load the configured models (the offline demo model when none is set) and open the data home."""
        from docqa.models import resolve_model
        from docqa.retrieval import Retriever
        from ingest.embedding import LlamaEmbedder

        settings = settings or Settings()
        emb = None
        if embedder and Retriever.resolve(settings.retrieval.retriever) != "bm25":
            path = resolve_model(settings.embed.model, "embedding", "DOCQA_EMBED_MODEL", settings.models_path)
            emb = LlamaEmbedder(path, settings.embed)
        elif embedder and settings.embed.model is not None:
            # `auto` searches by keyword alone (the best on the dev set with every embedder measured), so
            # nothing is embedded: a configured model would only cost ingest time. It is still checked
            # (a wrong path is an error now, not when hybrid is switched on), and the choice said once.
            path = resolve_model(settings.embed.model, "embedding", "DOCQA_EMBED_MODEL", settings.models_path)
            logger.info(
                "retriever %s: keyword search only, %s is not loaded (DOCQA_RETRIEVAL_RETRIEVER=hybrid uses it)",
                settings.retrieval.retriever,
                path.name,
            )
        rer = None
        if settings.rerank.model is not None:
            from docqa.reranking import LlamaReranker

            path = resolve_model(settings.rerank.model, "reranker", "DOCQA_RERANK_MODEL", settings.models_path)
            rer = LlamaReranker(path, settings.rerank)
        gen = load_generator(settings) if generator else None
        qa = cls(settings, emb, gen, rer)
        qa._close_models = [model.close for model in (emb, rer) if model is not None]
        return qa

    def close(self) -> None:
        self.indexes.save_all()
        if self.generator is not None:
            self.generator.close()
        self.retriever.close()
        for close_model in self._close_models:
            close_model()
        self._close_models = []
        self.store.close()

    def __enter__(self) -> DocQA:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- documents ---------------------------------------------------------------------------

    def collection(self, name: str | None = None, *, create: bool = False) -> CollectionRow:
        return self.store.collection(validate_collection_name(name or self.settings.collection), create=create)

    def ingest(
        self,
        paths: Sequence[str | Path],
        collection: str | None = None,
        progress: ProgressCallback | None = None,
        password: str | None = None,
    ) -> IngestReport:
        sources, missing = collect_sources(Path(p) for p in paths)
        report = self.ingest_sources(sources, collection, progress, password)
        report.files[:0] = missing
        return report

    def ingest_sources(
        self,
        sources: list[Source],
        collection: str | None = None,
        progress: ProgressCallback | None = None,
        password: str | None = None,
    ) -> IngestReport:
        report = self.ingestor.ingest(self.collection(collection, create=True), sources, progress, password)
        for callback in self.on_ingest:
            callback(report)
        return report

    def documents(self, collection: str | None = None) -> list[DocumentRow]:
        return self.store.documents(self.collection(collection).id)

    def chunk(self, chunk_id: int, collection: str | None = None) -> RetrievedChunk:
        """One chunk's text (what a citation points at), only from the named collection."""
        coll = self.collection(collection)
        found = self.store.fetch_chunks([chunk_id]).get(chunk_id)
        if found is None:
            raise ChunkNotFoundError(chunk_id, coll.name)
        try:
            self.store.document(coll, found.document_id)
        except DocqaError:
            raise ChunkNotFoundError(chunk_id, coll.name) from None
        return found

    def delete_document(self, document_id: int, collection: str | None = None) -> None:
        coll = self.collection(collection)
        removed = self.store.delete_document(coll, document_id)
        index = self.indexes.get(coll)
        if index is not None:
            index.remove(np.asarray(removed, dtype=np.int64))
            index.save()

    def check(self, collection: str | None = None, *, repair: bool = False) -> list[ConsistencyReport]:
        """Verify each collection: its rows (documents complete or failed, no orphans) and its FAISS
        file against the chunk rows. With repair, fix the rows first, then rebuild FAISS from them."""
        from docqa.audit import document_problems, orphan_problems

        names = [collection] if collection else [c.name for c in self.store.collections()]
        reports = [ConsistencyReport("(all collections)", orphan_problems(self.store, repair=repair))]
        for name in names:
            coll = self.collection(name)
            report = self.indexes.check(coll)
            report.problems[:0] = document_problems(self.store, coll.id, repair=repair)
            if repair and report.problems and coll.embed_dim is not None:
                self.indexes.rebuild(coll)
            reports.append(report)
        return [r for r in reports if r.problems or r.collection != "(all collections)"]

    # --- asking ------------------------------------------------------------------------------

    def _prepare(self, request: AskRequest) -> _Prepared:
        if self.generator is None:
            raise ConfigError("no generator loaded: open DocQA with generator=True to ask questions")
        question = request.question.strip()
        if not question:
            raise InvalidRequestError("the question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise InvalidRequestError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
        started = time.perf_counter()
        coll = self.collection(request.collection)
        if request.document_id is not None:
            self.store.document(coll, request.document_id)  # 404 for another collection's document
        top_k = request.top_k or self.settings.retrieval.top_k
        earlier = request.follows()
        # A follow-up is searched with the question before it: "and the governing law?" alone finds every
        # contract's clause. (A question on a new topic then still finds its own chunks, its terms being in
        # the search, and may bring one of the last topic's.)
        query = f"{earlier}\n{question}" if earlier else question
        ranked = self.retriever.retrieve(coll, query, top_k, request.document_id)
        retrieval_ms = (time.perf_counter() - started) * 1000
        base = THINKING_SAMPLING if request.thinking else NON_THINKING_SAMPLING
        if self.generator is not None and self.generator.info.prompt_format == "plain":
            # A base model on a completion prompt: Qwen's chat sampling does not apply; greedy reads best.
            base = replace(base, temperature=0.0)
        if request.temperature is not None:
            base = replace(base, temperature=request.temperature)
        max_tokens = request.max_tokens or self.settings.llm.max_tokens
        info = self.generator.info
        plan = build_prompt(
            question=question,
            ranked=ranked,
            prompt_format=info.prompt_format,
            thinking=request.thinking,
            n_ctx=info.n_ctx,
            max_tokens=max_tokens,
            count_tokens=self.generator.count_tokens,
            earlier=earlier,
        )
        seed = request.seed if request.seed is not None else self.settings.llm.seed
        budget = self.settings.llm.thinking_budget if request.thinking else None
        params = replace(
            base,
            max_tokens=max_tokens,
            seed=seed,
            stop=() if request.ignore_eos else plan.stop,
            thinking_budget=budget,
            ignore_eos=request.ignore_eos,
        )
        mode: Mode = "thinking" if request.thinking else "non-thinking"
        return _Prepared(mode, plan, params, started, retrieval_ms)

    def stream(self, request: AskRequest) -> Iterator[AskEvent]:
        """Answer events as they are generated: citations, reasoning/answer deltas, then done."""
        started = time.perf_counter()
        key = self._cache_key(request)
        cached = self.answer_cache.get(key) if key else None
        if cached is not None:
            yield from self._replay(cached, started)
            return
        prep = self._prepare(request)
        builder = AnswerBuilder(prep.mode, prep.plan, prep.started, prep.retrieval_ms)
        yield from self._events(prep, builder)
        self._finished(key, builder)

    def ask(self, request: AskRequest) -> Answer:
        started = time.perf_counter()
        key = self._cache_key(request)
        cached = self.answer_cache.get(key) if key else None
        if cached is not None:
            for _ in self._replay(cached, started):
                pass
            return cached
        prep = self._prepare(request)
        builder = AnswerBuilder(prep.mode, prep.plan, prep.started, prep.retrieval_ms)
        for _ in self._events(prep, builder):
            pass
        if builder.error is not None:
            raise DocqaError(builder.error)
        self._finished(key, builder)
        return builder.result()

    # --- the answer cache ----------------------------------------------------------------------

    def _cache_key(self, request: AskRequest) -> CacheKey | None:
        if not (self.settings.answer_cache and request.use_cache) or request.ignore_eos or self.generator is None:
            return None
        return cache_key(
            self.collection(request.collection).id,
            request.question,
            thinking=request.thinking,
            model_id=self.generator.info.model_id,
            top_k=request.top_k or self.settings.retrieval.top_k,
            document_id=request.document_id,
            max_tokens=request.max_tokens or self.settings.llm.max_tokens,
            temperature=request.temperature,
            seed=request.seed,
            retrieval=self.retriever.signature(),
            earlier=(earlier,) if (earlier := request.follows()) else (),
        )

    def _replay(self, answer: Answer, started: float) -> Iterator[AskEvent]:
        elapsed_ms = (time.perf_counter() - started) * 1000
        answer.timings.ttft_ms = answer.timings.total_ms = elapsed_ms
        yield from replay(answer, elapsed_ms)
        self._notify(AnswerOutcome(answer.mode, True, answer.timings, answer.finish_reason))

    def _finished(self, key: CacheKey | None, builder: AnswerBuilder) -> None:
        if builder.error is not None:
            return
        answer = builder.result()
        if key is not None:
            self.answer_cache.put(key, answer)
        self._notify(AnswerOutcome(answer.mode, False, answer.timings, answer.finish_reason))

    def _notify(self, outcome: AnswerOutcome) -> None:
        for callback in self.on_answer:
            callback(outcome)

    def _submit(self, prep: _Prepared, loop: asyncio.AbstractEventLoop | None = None) -> GenerationStream | None:
        """Queue the prompt before any event goes out: a full queue raises BusyError while the API can
        still answer 429 (after a streamed answer's first event its status is 200). None: no sources."""
        if not prep.plan.sources:
            return None
        assert self.generator is not None
        return self.generator.submit(prep.plan.prompt, prep.params, loop=loop)

    def _events(self, prep: _Prepared, builder: AnswerBuilder) -> Iterator[AskEvent]:
        stream = self._submit(prep)
        try:
            yield builder.opening()
            if stream is None:
                yield from self._no_sources(builder)
                return
            for event in stream:
                yield from builder.on_event(event)
        finally:
            if stream is not None:  # a reader that stops early frees the sequence at the next step
                stream.cancel()

    async def astream(self, request: AskRequest) -> AsyncIterator[AskEvent]:
        """The async twin of stream(), for the API: retrieval runs in a thread, tokens arrive on the loop."""
        started = time.perf_counter()
        key = await asyncio.to_thread(self._cache_key, request)
        cached = await asyncio.to_thread(self.answer_cache.get, key) if key else None
        if cached is not None:
            for event in self._replay(cached, started):
                yield event
            return
        prep = await asyncio.to_thread(self._prepare, request)
        builder = AnswerBuilder(prep.mode, prep.plan, prep.started, prep.retrieval_ms)
        stream = self._submit(prep, asyncio.get_running_loop())
        try:
            yield builder.opening()
            if stream is None:
                for event in self._no_sources(builder):
                    yield event
            else:
                async for gen_event in stream:
                    for event in builder.on_event(gen_event):
                        yield event
        finally:
            if stream is not None:  # a client gone before its tokens frees the sequence at the next step
                stream.cancel()
        await asyncio.to_thread(self._finished, key, builder)

    @staticmethod
    def _no_sources(builder: AnswerBuilder) -> Iterator[AskEvent]:
        yield from builder.on_event(GenEvent("text", text=NO_SOURCES_ANSWER))
        yield from builder.on_event(GenEvent("finished", finish_reason="no_sources"))
