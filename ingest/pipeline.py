"""The ingestion pipeline: files -> pages -> chunks -> embeddings -> SQLite + FAISS.

Per file: hash it; skip it if unchanged; read, chunk and embed it in memory; then write the document
and all its chunks in one SQLite transaction and update the FAISS index. A file that fails is recorded
with its error and the rest go on. FAISS is written at checkpoints and at the end; if the process dies
in between, the next open sees the difference and rebuilds FAISS from the embeddings in SQLite.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

import numpy as np

from docqa.core.documents import FileResult, IngestReport, Progress, ProgressCallback, Source
from docqa.core.errors import DocqaError, EmbeddingModelMismatchError, ModelClosedError, ReadError, is_disk_full
from docqa.core.files import PDF_SUFFIXES, TEXT_SUFFIXES, is_supported, sha256_file, unsupported_type
from docqa.core.protocols import Embedder
from docqa.core.settings import ChunkingSettings, IngestSettings
from docqa.core.types import ChunkDraft, ParsedDocument
from docqa.store.index_protocols import VectorIndexSet
from docqa.store.models import CollectionRow, DocumentRow
from docqa.store.protocol import Store
from ingest import bounds
from ingest.chunking import chunk_pages, tiktoken_counter
from ingest.isolation import read_document_safely
from ingest.readers import reader_version

logger = logging.getLogger(__name__)


def collect_sources(paths: Iterable[Path]) -> tuple[list[Source], list[FileResult], list[str]]:
    """Expand folders recursively. Returns the files to read, the named paths that fail before reading
    (missing, or of a type docqa cannot read: no document is recorded for them) and the files skipped
    inside folders for their type (hidden files and folders are left out without a word)."""
    sources: list[Source] = []
    problems: list[FileResult] = []
    skipped: list[Path] = []
    seen: set[Path] = set()
    for given in paths:
        if given.is_dir():
            files: list[Path] = []
            for p in sorted(given.rglob("*")):
                if not p.is_file() or any(part.startswith(".") for part in p.relative_to(given).parts):
                    continue
                (files if is_supported(p) else skipped).append(p)
        elif given.is_file():
            if not is_supported(given):
                problems.append(FileResult(str(given), "failed", error=unsupported_type(given)))
                continue
            files = [given]
        else:
            problems.append(FileResult(str(given), "failed", error="no such file or folder"))
            continue
        for f in files:
            resolved = f.resolve()
            if resolved not in seen:
                seen.add(resolved)
                sources.append(Source(resolved, str(resolved), f.name))
    return sources, problems, [str(p) for p in skipped]


@dataclass
class _Prepared:
    """One file as the read-ahead thread leaves it: hashed, read and chunked, or why not."""

    size: int = 0
    sha: str = ""
    existing: DocumentRow | None = None
    parsed: ParsedDocument | None = None
    chunks: list[ChunkDraft] = field(default_factory=list)
    error: str | None = None
    unreadable: bool = False  # could not even be hashed: nothing is recorded for it
    recipe: str = ""  # how this docqa reads and chunks it (ingest_recipe)
    twin: DocumentRow | None = None  # a stored document with the same bytes under another name

    @property
    def unchanged(self) -> bool:
        """Already ingested from these very bytes, read and chunked the same way: nothing to do."""
        existing = self.existing
        return (
            existing is not None
            and existing.sha256 == self.sha
            and existing.status == "ready"
            and existing.recipe == self.recipe
        )


def ingest_recipe(chunking: ChunkingSettings, path: Path) -> str:
    """What decides a document's chunks besides its bytes: its reader's version and the chunking."""
    return (
        f"readers {reader_version(path)}; chunks of {chunking.max_tokens} {chunking.tokenizer} tokens, "
        f"{chunking.overlap_tokens} overlapping"
    )


class Ingestor:
    def __init__(
        self,
        store: Store,
        indexes: VectorIndexSet,
        embedder: Embedder | None,
        chunking: ChunkingSettings,
        limits: IngestSettings,
    ) -> None:
        self._store = store
        self._indexes = indexes
        self._embedder = embedder
        self._chunking = chunking
        self._limits = limits
        self._counter = tiktoken_counter(chunking.tokenizer)
        self._locks: dict[int, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _collection_lock(self, collection_id: int) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(collection_id, threading.Lock())

    def check_embedder(self, collection: CollectionRow) -> None:
        if self._embedder is None or collection.embed_model is None:
            return
        if collection.embed_model != self._embedder.model_id or collection.embed_dim != self._embedder.dim:
            raise EmbeddingModelMismatchError(collection.name, collection.embed_model, self._embedder.model_id)

    def ingest(
        self,
        collection: CollectionRow,
        sources: list[Source],
        progress: ProgressCallback | None = None,
        password: str | None = None,
        max_chars: int | None = None,
    ) -> IngestReport:
        """max_chars: the most characters of text the files of this call may bring together (an upload's
        bound); a file that would pass it fails, saying so, and the files after it are still tried."""
        self.check_embedder(collection)
        report = IngestReport(embeddings=self._embedder is not None)
        started = last_save = time.monotonic()
        with self._collection_lock(collection.id):
            if self._embedder is not None and collection.embed_model is None:
                self._store.set_embedder(collection.id, self._embedder.model_id, self._embedder.dim)
                collection.embed_model, collection.embed_dim = self._embedder.model_id, self._embedder.dim
            # Open (and verify) the index before the first write, so a new collection starts empty.
            self._indexes.get(collection)
            # One thread reads and chunks the next file while this one embeds: on a GPU, reading,
            # hashing and token counting would otherwise leave it idle (79% -> see docs/benchmarks.md).
            # And one thread writes the previous file (SQLite, FTS5, FAISS) while this one embeds; one
            # write at a time, in file order, so a crash still leaves whole files or none.
            read_ahead = ThreadPoolExecutor(1, thread_name_prefix="docqa-read-ahead")
            writer = ThreadPoolExecutor(1, thread_name_prefix="docqa-writer")
            upcoming = [read_ahead.submit(self._read, collection, s, password) for s in sources[:1]]
            outcomes: list[FileResult | Future[FileResult]] = []
            writing: Future[FileResult] | None = None
            first_with: dict[str, str] = {}  # content hash -> the source it was first met under in this run
            spent = 0  # characters of text read for new documents so far, against max_chars
            try:
                for i, source in enumerate(sources):
                    waited = time.monotonic()
                    prepared = upcoming.pop(0).result()
                    report.seconds_waiting_for_reads += time.monotonic() - waited
                    if i + 1 < len(sources):
                        upcoming.append(read_ahead.submit(self._read, collection, sources[i + 1], password))
                    if prepared.sha and prepared.existing is None and prepared.sha in first_with:
                        outcomes.append(same_content(source.name, first_with[prepared.sha]))
                        continue
                    if prepared.sha and prepared.error is None:
                        first_with.setdefault(prepared.sha, source.key)
                    if max_chars is not None and prepared.parsed is not None and prepared.error is None:
                        chars = bounds.text_size(prepared.parsed)
                        if spent + chars > max_chars:
                            prepared.error = bounds.over_the_request(chars, spent, max_chars)
                        else:
                            spent += chars
                    embedding = time.monotonic()
                    outcome = self._ingest_one(collection, source, prepared, i, len(sources), progress)
                    report.seconds_embedding += time.monotonic() - embedding
                    if isinstance(outcome, FileResult):
                        outcomes.append(outcome)
                        continue
                    waited = time.monotonic()
                    if writing is not None:
                        writing.result()  # the previous file's write, which ran while this file embedded
                    report.seconds_waiting_for_writes += time.monotonic() - waited
                    writing = writer.submit(outcome)
                    outcomes.append(writing)
                    if time.monotonic() - last_save > self._limits.checkpoint_seconds:
                        writing.result()
                        self._indexes.save_all()
                        last_save = time.monotonic()
            finally:
                # Interrupted (Ctrl+C, SIGTERM): do not wait for a file being read ahead; a write
                # already handed over finishes (it is one transaction) before FAISS is saved.
                read_ahead.shutdown(wait=False, cancel_futures=True)
                writer.shutdown(wait=True)
                self._indexes.save_all()
        report.files = [o if isinstance(o, FileResult) else o.result() for o in outcomes]
        report.seconds = time.monotonic() - started
        return report

    def _read(self, collection: CollectionRow, source: Source, password: str | None) -> _Prepared:
        """Hash, read and chunk one file; no writes (those happen on the ingesting thread)."""
        try:
            size = source.path.stat().st_size
            sha = sha256_file(source.path)
        except OSError as exc:
            return _Prepared(error=f"cannot read file: {exc.strerror}", unreadable=True)
        prepared = _Prepared(
            size=size,
            sha=sha,
            existing=self._store.find_document(collection.id, source.key),
            recipe=ingest_recipe(self._chunking, source.path),
        )
        if prepared.unchanged:
            return prepared
        if prepared.existing is None:  # a new name: the same bytes stored under another one are that document
            prepared.twin = self._store.document_with_content(collection.id, sha, source.key)
            if prepared.twin is not None:
                return prepared
        try:
            if size > self._limits.max_file_mb * 1024 * 1024:
                raise ReadError(f"file is {size / 2**20:.0f} MiB, over the {self._limits.max_file_mb} MiB limit")
            suffix = source.path.suffix.lower()
            if suffix in TEXT_SUFFIXES:
                bounds.check_text_file_size(size, self._limits)
            prepared.parsed = read_document_safely(source.path, password, self._limits)
            bounds.check_output(
                prepared.parsed, self._limits, paged=suffix in PDF_SUFFIXES, text_pages=suffix in TEXT_SUFFIXES
            )
            chunks = chunk_pages(
                prepared.parsed.pages, self._chunking.max_tokens, self._chunking.overlap_tokens, self._counter
            )
            if not chunks:
                raise ReadError("no text to index")
            prepared.chunks = chunks
        except ModelClosedError:  # the service is closing (shutdown): this file is left as it was, not failed
            raise
        except DocqaError as exc:
            prepared.error = str(exc)
        except Exception as exc:  # a reader bug on one file must not stop the folder
            logger.exception("unexpected error reading %s", source.name)
            prepared.error = f"{type(exc).__name__}: {exc}"
        return prepared

    def _ingest_one(
        self,
        collection: CollectionRow,
        source: Source,
        prepared: _Prepared,
        index: int,
        total: int,
        progress: ProgressCallback | None,
    ) -> FileResult | Callable[[], FileResult]:
        """Embed one prepared file. What is left to write (the document, or its failure) comes back as
        a job for the writer thread; a file with nothing to write comes back as its result."""

        def emit(stage: Literal["reading", "embedding", "done"], **kw: float | int) -> None:
            if progress is not None:
                progress(Progress(stage, source.name, index, total, **kw))  # type: ignore[arg-type]

        emit("reading")
        if prepared.unreadable:
            return FileResult(source.name, "failed", error=prepared.error)
        size, sha, existing = prepared.size, prepared.sha, prepared.existing
        if prepared.twin is not None:
            return _as_twin(source.name, prepared.twin, emit)
        if existing is not None and prepared.unchanged:
            if source.metadata:  # the same file, now with its uploader's fields: only the catalog changes
                self._store.set_catalog_fields(existing.id, source.metadata)
            emit("done", pages=existing.pages, chunks=existing.n_chunks)
            return FileResult(
                source.name,
                "unchanged",
                existing.id,
                existing.pages,
                existing.n_chunks,
                existing.n_tokens,
                warnings=json.loads(existing.warnings or "[]"),  # what was said when it was read still holds
            )
        parsed, chunks = prepared.parsed, prepared.chunks
        if prepared.error is not None or parsed is None:
            return partial(self._failed, collection, source, sha, size, prepared.error or "not read")
        try:
            if self._embedder is not None:  # BM25 alone: no "embedding 0/156 pages" on a job or a terminal
                emit("embedding", pages=len(parsed.pages), chunks=len(chunks))
            vectors, tokens_embedded = self._embed(
                [c.text for c in chunks],
                lambda done, tps: emit(
                    "embedding", pages=len(parsed.pages), chunks=len(chunks), chunks_embedded=done, tokens_per_s=tps
                ),
            )
        except ModelClosedError:  # shutdown: the files not yet written are not failures; the ingest stops
            raise
        except DocqaError as exc:
            return partial(self._failed, collection, source, sha, size, str(exc))
        except Exception as exc:  # an embedder error on one file must not stop the folder
            logger.exception("unexpected error embedding %s", source.name)
            return partial(self._failed, collection, source, sha, size, f"{type(exc).__name__}: {exc}")
        return partial(self._write, collection, source, prepared, parsed, vectors, emit, tokens_embedded)

    def _write(
        self,
        collection: CollectionRow,
        source: Source,
        prepared: _Prepared,
        parsed: ParsedDocument,
        vectors: np.ndarray | None,
        emit: Callable[..., None],
        tokens_embedded: int,
    ) -> FileResult:
        """Save one embedded file: the document and its chunks in one transaction, then FAISS. A full disk
        fails this file (its transaction rolled back), not the whole upload."""
        chunks, existing = prepared.chunks, prepared.existing
        try:
            saved = self._store.save_document(
                collection_id=collection.id,
                source=source.key,
                name=source.name,
                sha256=prepared.sha,
                size_bytes=prepared.size,
                pages=len(parsed.pages),
                warnings=parsed.warnings,
                chunks=chunks,
                embeddings=vectors,
                recipe=prepared.recipe,
                ocr_pages=[page.number for page in parsed.pages if page.ocr],
                metadata=source.metadata,
                unique_content=existing is None,
                title=parsed.title,
            )
        except Exception as exc:
            if not is_disk_full(exc):
                raise
            logger.error("disk full writing %s", source.name)
            return FileResult(source.name, "failed", error=f"disk full at {self._store.location}: nothing written")
        if saved.twin is not None:  # another worker stored the same bytes since this file was hashed
            return _as_twin(source.name, saved.twin, emit)
        vector_index = self._indexes.get(collection)
        if vector_index is not None:
            vector_index.remove(np.asarray(saved.removed_chunk_ids, dtype=np.int64))
            if vectors is not None:
                vector_index.add(np.asarray(saved.chunk_ids, dtype=np.int64), vectors)
        emit("done", pages=len(parsed.pages), chunks=len(chunks))
        return FileResult(
            source.name,
            "updated" if existing is not None and existing.status == "ready" else "added",
            saved.document_id,
            len(parsed.pages),
            len(chunks),
            sum(c.n_tokens for c in chunks),
            warnings=list(parsed.warnings),
            tokens_embedded=tokens_embedded,
        )

    def _embed(self, texts: list[str], on_progress: Callable[[int, float], None]) -> tuple[np.ndarray | None, int]:
        """The texts' vectors (None without an embedder) and how many tokens the embedder ran."""
        if self._embedder is None:
            return None, 0
        started = time.monotonic()
        tokens = 0

        def on_batch(done: int, batch_tokens: int) -> None:
            nonlocal tokens
            tokens += batch_tokens
            on_progress(done, tokens / max(time.monotonic() - started, 1e-6))

        return self._embedder.embed_documents(texts, on_batch), tokens

    def _failed(self, collection: CollectionRow, source: Source, sha: str, size: int, error: str) -> FileResult:
        """A file's failure, recorded with its document and returned in the report, which every caller says
        (the CLI's line, the API's response, the job's status): logged at INFO, not said twice."""
        logger.info("failed to ingest %s: %s", source.name, error)
        doc_id = self._store.record_failure(
            collection_id=collection.id, source=source.key, name=source.name, sha256=sha, size_bytes=size, error=error
        )
        return FileResult(source.name, "failed", doc_id, error=error)


def shown_source(key: str) -> str:
    """Where a document came from, as a person reads it: its path, or "NAME (uploaded)"."""
    return f"{key.removeprefix('upload:')} (uploaded)" if key.startswith("upload:") else key


def _as_twin(name: str, twin: DocumentRow, emit: Callable[..., None]) -> FileResult:
    emit("done", pages=twin.pages, chunks=twin.n_chunks)
    return same_content(name, twin.source, twin)


def same_content(name: str, twin_key: str, twin: DocumentRow | None = None) -> FileResult:
    """A file whose bytes are already a document of the collection under another name: not stored again,
    reported as that document, named by where it came from (twins of one name can be told apart)."""
    note = f"same content as {shown_source(twin_key)}: not stored again"
    if twin is None:  # met earlier in this run: its document is being written
        return FileResult(name, "unchanged", warnings=[note])
    return FileResult(name, "unchanged", twin.id, twin.pages, twin.n_chunks, twin.n_tokens, warnings=[note])
