"""docqa as a library: `DocQA.open()` loads what a caller needs, then ingest, ask, list and delete.

    from docqa import DocQA, AskRequest
    with DocQA.open() as qa:
        qa.ingest(["contracts/"])
        print(qa.ask(AskRequest("What is the notice period?")).answer)

The CLI, the REST API and eval are thin layers over this class: they call its methods and read
`status()` and `collections()`, never its members.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from types import TracebackType

import numpy as np

from docqa import components
from docqa.answering.cache import AnswerCache
from docqa.core.documents import IngestReport, ProgressCallback, Source
from docqa.core.errors import (
    ChunkNotFoundError,
    ClientGoneError,
    CollectionNotFoundError,
    DocqaError,
    InvalidRequestError,
)
from docqa.core.events import AskEvent
from docqa.core.files import sha256_file
from docqa.core.protocols import Embedder, Generator, Reranker
from docqa.core.requests import AskRequest, validate_collection_name
from docqa.core.sampling_params import SamplingParams
from docqa.core.settings import Settings
from docqa.core.streams import GenerationStream
from docqa.core.types import Answer, GeneratorInfo, RetrievedChunk
from docqa.profiles.registry import ProfileSet
from docqa.retrieval.retriever import Retriever
from docqa.service import node, reading
from docqa.service.asking import Asker, AskRun
from docqa.service.conversations import ConversationService
from docqa.service.jobs import IngestQueue
from docqa.service.liveness import Liveness
from docqa.service.originals import Originals, forget_unheld, unheld_originals
from docqa.service.reading_run import ReadingRun
from docqa.service.status import AnswerOutcome, CacheStats, CollectionSummary, ServiceStatus
from docqa.store.api_keys import ApiKeys
from docqa.store.audit import document_problems, orphan_problems
from docqa.store.consistency import ConsistencyReport
from docqa.store.models import CollectionRow, DocumentRow
from ingest.pipeline import Ingestor, collect_sources

logger = logging.getLogger(__name__)
CLIENT_POLL_S = 0.25  # how often a non-streamed ask checks that its client is still there


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
        self.profiles = ProfileSet.named(settings.retrieval.profiles)  # the document profiles switched on
        self.store, self.indexes = components.open_store(settings, self.profiles)
        self.retriever = Retriever(
            self.store, self.indexes, embedder, settings.retrieval, reranker, settings.rerank, self.profiles
        )
        self.ingestor = Ingestor(self.store, self.indexes, embedder, settings.chunking, settings.ingest)
        self.answer_cache = AnswerCache(self.store, settings.answer_cache_entries)
        self._liveness = Liveness(self.store, generator)
        # Called once per finished answer and per ingest run (metrics hook in here).
        self.on_answer: list[Callable[[AnswerOutcome], None]] = []
        self.on_ingest: list[Callable[[IngestReport], None]] = []
        self._asker = Asker(
            settings, self.store, self.retriever, self.answer_cache, generator, self.collection, self._notify
        )
        # where asks are retrieved and their prompts built: a few threads (settings.retrieval.workers)
        self._preparing = ThreadPoolExecutor(settings.retrieval.workers, thread_name_prefix="docqa-ask")
        self._queue: IngestQueue | None = None  # ingestion jobs (a database URL), opened at first use
        self.conversations = ConversationService(self)  # kept on the server, per collection and API key
        self.api_keys = ApiKeys(self.store.session)  # named keys and their grants (docqa keys)
        # uploaded files, for the page's viewer; also in the database or object store a deployment shares
        self.originals = Originals(settings.data_dir / "originals", components.shared_originals(settings, self.store))
        # The models open() loaded, which close() frees; models handed in belong to the caller.
        self._close_models: list[Callable[[], None]] = []

    @classmethod
    def open(cls, settings: Settings | None = None, *, embedder: bool = True, generator: bool = True) -> DocQA:
        """Load the configured models (the offline demo model when none is set) and open the data home."""
        settings = settings or Settings.load()
        emb = components.load_embedder(settings) if embedder else None
        rer = components.load_reranker(settings)
        gen = components.load_generator(settings) if generator else None
        qa = cls(settings, emb, gen, rer)
        qa._close_models = [model.close for model in (emb, rer) if model is not None]
        return qa

    def close(self) -> None:
        self._preparing.shutdown(wait=True, cancel_futures=True)
        if self._queue is not None:
            self._queue.close()
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

    # --- what the interfaces show ------------------------------------------------------------

    def down(self) -> dict[str, str]:
        """What an ask needs that does not answer now (the database, the LLM endpoint) -> why
        (docqa.service.liveness)."""
        return self._liveness.down()

    def status(self) -> ServiceStatus:
        return node.status_of(self.generator, self.embedder, self.reranker)

    @property
    def retriever_kind(self) -> str:
        """The retriever the settings name, `auto` resolved: bm25, dense or hybrid."""
        return Retriever.resolve(self.settings.retrieval.retriever)

    @property
    def generator_info(self) -> GeneratorInfo | None:
        return self.generator.info if self.generator is not None else None

    def complete(
        self, prompt: str, params: SamplingParams, loop: asyncio.AbstractEventLoop | None = None
    ) -> GenerationStream:
        """A raw prompt on the generator, no retrieval: what a docqa GPU node serves to other docqa
        processes (`POST /v1/completions`). BusyError when its queue is full."""
        return node.complete(self.generator, prompt, params, loop)

    def embed(self, texts: Sequence[str], input_type: node.InputType) -> tuple[np.ndarray, str]:
        """Texts embedded as search embeds them (`POST /v1/embeddings`), with the model's name."""
        return node.embed(self.embedder, texts, input_type)

    def count_tokens(self, prompt: str) -> int:
        return node.count_tokens(self.generator, prompt)

    def collections(self) -> list[CollectionSummary]:
        """Every collection with its documents by status and its chunks."""
        documents: dict[str, dict[str, int]] = {}
        for name, status, count in self.store.document_counts():
            documents.setdefault(name, {})[status] = count
        chunks = self.store.chunk_counts()
        return [
            CollectionSummary(c.name, c.created_at, documents.get(c.name, {}), chunks.get(c.name, 0))
            for c in self.store.collections()
        ]

    def cache_stats(self) -> CacheStats:
        cache = self.answer_cache
        return CacheStats(entries=cache.entries(), hits=cache.hits, misses=cache.misses)

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
        sources, missing, skipped = collect_sources(Path(p) for p in paths)
        report = self.ingest_sources(sources, collection, progress, password)
        report.files[:0] = missing
        report.skipped = skipped
        return report

    def ingest_sources(
        self,
        sources: list[Source],
        collection: str | None = None,
        progress: ProgressCallback | None = None,
        password: str | None = None,
        max_chars: int | None = None,
    ) -> IngestReport:
        """max_chars: the bound on the text all these files bring together (an upload's; see Ingestor.ingest).
        A named collection this call creates is not kept where none of its files could be read (report.dropped);
        the default one is, as every command without --collection lists it."""
        name = validate_collection_name(collection or self.settings.collection)
        created = name != self.settings.collection and not self._exists(name)
        coll = self.collection(name, create=True)
        replaced = [s.key for s in sources if s.key.startswith("upload:")]  # uploads' originals are kept
        before = [found.sha256 for key in replaced if (found := self.store.find_document(coll.id, key)) is not None]
        kept = self._keep_uploads(sources)
        with self.originals.pinned(kept):
            report = self.ingestor.ingest(coll, sources, progress, password, max_chars=max_chars)
        # a replaced upload's bytes, and those of files that failed
        forget_unheld(self.originals, self.store, [*before, *kept])
        read = any(f.status != "failed" for f in report.files)
        if created and not read and self.store.drop_collection(coll, unless_used=True):
            self.indexes.drop(coll)
            report.dropped = coll.name
        for callback in self.on_ingest:
            callback(report)
        return report

    def _exists(self, name: str) -> bool:
        try:
            self.store.collection(name)
        except CollectionNotFoundError:
            return False
        return True

    def _keep_uploads(self, sources: list[Source]) -> list[str]:
        """Keep the uploaded files (a path's file stays where it is) before any becomes a document: a process
        killed mid-upload then leaves at worst a kept file no document holds (`docqa check --repair` removes
        it), never a document without its file. Returns the contents kept."""
        kept = []
        for source in sources:
            if source.key.startswith("upload:") and source.path.is_file():
                sha = sha256_file(source.path)
                self.originals.keep(sha, source.path)
                kept.append(sha)
        return kept

    def original(self, document_id: int, collection: str | None = None) -> tuple[DocumentRow, Path]:
        """A document and the file it was read from (OriginalNotKeptError where docqa has none)."""
        document = self.store.document(self.collection(collection), document_id)
        return document, self.originals.of(document)

    @property
    def queues_uploads(self) -> bool:
        """Whether uploads become jobs for `docqa worker` (a database, and DOCQA_INGEST_UPLOADS=queue)."""
        return bool(self.settings.database_url) and self.settings.ingest.uploads == "queue"

    def ingest_queue(self) -> IngestQueue:
        """Ingestion jobs: files kept in the database, ingested by worker processes."""
        if self._queue is None:
            self._queue = IngestQueue(self)
        return self._queue

    def documents(self, collection: str | None = None, where: Sequence[tuple[str, str]] = ()) -> list[DocumentRow]:
        """The collection's documents; with a catalog filter, the ready ones it selects (none: an error saying
        which condition matched nothing and what the collection holds)."""
        coll = self.collection(collection)
        rows = self.store.documents(coll.id)
        if not where:
            return rows
        within = set(self._asker.within(coll, where))
        return [d for d in rows if d.id in within]

    def find_document(self, source: str, collection: str | None = None) -> DocumentRow | None:
        """The document ingested from `source` (an absolute path, or "upload:<name>"), if any."""
        return self.store.find_document(self.collection(collection).id, source)

    def document_with_content(self, sha256: str, collection: str | None = None) -> DocumentRow | None:
        """The ready document holding these very bytes (a file met under another name is that document)."""
        return self.store.document_with_content(self.collection(collection).id, sha256, other_than="")

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

    def count_chunks(self, collection: str | None = None) -> int:
        return self.store.count_chunks(self.collection(collection).id)

    def delete_document(self, document_id: int, collection: str | None = None) -> None:
        coll = self.collection(collection)
        sha = self.store.document(coll, document_id).sha256
        removed = self.store.delete_document(coll, document_id)
        index = self.indexes.get(coll)
        if index is not None:
            index.remove(np.asarray(removed, dtype=np.int64))
            self.indexes.save(coll)
        forget_unheld(self.originals, self.store, [sha])  # no document may hold these bytes any more

    def delete_collection(self, name: str) -> int:
        """Delete a collection and everything in it: each document as delete_document deletes it (out of the
        keyword index; its kept original where no other document holds those bytes), then the collection with its
        conversations, cached answers and queued jobs, and its vector index. Returns the documents deleted.
        Interrupted, the documents deleted stay deleted and the others whole: deleting again finishes it."""
        coll = self.collection(name)
        documents = self.store.documents(coll.id)
        for document in documents:
            self.store.delete_document(coll, document.id)
        if not self.store.drop_collection(coll):
            raise InvalidRequestError(
                f"a document was added to collection '{coll.name}' while it was deleted: delete it again"
            )
        self.indexes.drop(coll)
        forget_unheld(self.originals, self.store, [d.sha256 for d in documents])
        return len(documents)

    def integrity_ok(self) -> bool:
        """The store's own check: SQLite's integrity check of the data home; on Postgres, that the database
        answers at docqa's schema revision (Postgres checks its pages itself)."""
        return self.store.integrity_ok()

    def check(self, collection: str | None = None, *, repair: bool = False) -> list[ConsistencyReport]:
        """Verify each collection: its rows (documents complete or failed, no orphans) and its vectors
        (the FAISS file, or pgvector's rows on Postgres) against the chunk rows. With repair, fix the rows
        first, then the indexes from them."""
        names = [collection] if collection else [c.name for c in self.store.collections()]
        reports = [ConsistencyReport("(all collections)", orphan_problems(self.store, repair=repair))]
        reports[0].problems += unheld_originals(self.originals, self.store, repair)
        for name in names:
            coll = self.collection(name)
            report = self.indexes.check(coll)
            report.problems[:0] = document_problems(self.store, coll.id, repair=repair)
            if repair and report.problems and coll.embed_dim is not None:
                self.indexes.rebuild(coll)
            reports.append(report)
        return [r for r in reports if r.problems or r.collection != "(all collections)"]

    # --- searching and asking ----------------------------------------------------------------

    def embed_query(self, text: str) -> np.ndarray | None:
        """The question's vector, or None where no embedder is loaded (keyword search alone)."""
        return self.embedder.embed_query(text) if self.embedder is not None else None

    def retrieve(
        self,
        question: str,
        k: int,
        collection: str | None = None,
        document_id: int | None = None,
        *,
        retriever: str | None = None,
        query_vector: np.ndarray | None = None,
    ) -> list[RetrievedChunk]:
        """The k best chunks for a question, without generating (eval, and callers of their own)."""
        coll = self.collection(collection)
        return self.retriever.retrieve(coll, question, k, document_id, retriever=retriever, query_vector=query_vector)

    def scope_of(self, request: AskRequest) -> tuple[str, tuple[int, ...]]:
        """The scope a question would be read with, and the documents it names (or the caller pinned)."""
        decision = reading.decide(self._asker, self.collection(request.collection), request)
        return decision.scope, decision.documents

    def prompts(self, request: AskRequest) -> list[tuple[tuple[int, ...], str]]:
        """The prompts a question would send to the model, each with the documents whose passages it holds,
        without generating: what benchmarks measure (the evidence that reaches the model)."""
        return reading.start(self._asker, replace(request, use_cache=False)).prompts()

    def ask(self, request: AskRequest) -> Answer:
        run = reading.start(self._asker, request)
        for _ in run.events():
            pass
        return run.answer()

    def stream(self, request: AskRequest) -> Iterator[AskEvent]:
        """Answer events as they are generated: citations, reasoning/answer deltas, then done."""
        yield from reading.start(self._asker, request).events()

    async def aask(self, request: AskRequest, gone: Callable[[], Awaitable[bool]] | None = None) -> Answer:
        """ask() for the API: a preparing thread is held for retrieval only (asks beyond `retrieval.workers` wait
        their turn; the generator's queue bound decides who is refused: a full queue is BusyError), and when
        `gone()` says the client went away, the answer is cancelled (its sequence freed, or its place in the
        queue) instead of generated for nobody."""
        run = await self._start(request)

        async def drain() -> None:
            async for _ in run.aevents():
                pass

        draining = asyncio.ensure_future(drain())
        while not draining.done():
            await asyncio.wait({draining}, timeout=CLIENT_POLL_S)
            if not draining.done() and gone is not None and await gone():
                draining.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await draining
                raise ClientGoneError("the client went away; the answer was cancelled")
        draining.result()  # BusyError, a failed generation, ...
        return run.answer()

    async def astream(self, request: AskRequest) -> AsyncIterator[AskEvent]:
        """The async twin of stream(), for the API: retrieval runs in a thread, tokens arrive on the loop."""
        run = await self._start(request)
        async for event in run.aevents():
            yield event

    async def _start(self, request: AskRequest) -> AskRun | ReadingRun:
        """Retrieval and the prompt (or the prompts of a question over many documents), in one of the preparing
        threads (asks beyond them wait their turn)."""
        return await asyncio.get_running_loop().run_in_executor(self._preparing, reading.start, self._asker, request)

    def _notify(self, outcome: AnswerOutcome) -> None:
        for callback in self.on_answer:
            callback(outcome)
