"""Ingestion as jobs (with DOCQA_DATABASE_URL): a file is stored in Postgres and queued at once; a
`docqa worker` process on any machine ingests it, and every API process shows its progress.

A job goes queued -> parsing -> embedding -> ready | failed. A file that cannot be read ends `failed`
with the reason, as in-process ingestion reports it; a worker that dies mid-job leaves the job to be
queued again (docqa.store.postgres.job_queue), and the write that ends it replaces any earlier version
of the document in one transaction: ready exactly once, never half-visible to a question.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from docqa.core.documents import IngestReport, Progress, ProgressCallback, Source
from docqa.core.errors import DatabaseUnavailableError, JobNotFoundError, QueueNotConfiguredError, UploadStoreError
from docqa.core.files import staged_name
from docqa.core.process_folders import clear_stale, process_folder
from docqa.core.settings import Settings
from docqa.store.models import CollectionRow
from docqa.store.postgres.ingest_jobs import IngestJob, IngestJobs
from docqa.store.postgres.job_queue import JobQueue
from docqa.store.postgres.store import PostgresStore
from docqa.store.protocol import Store
from docqa.store.uploads import S3Uploads
from ingest.pipeline import collect_sources

logger = logging.getLogger(__name__)
FINISHED_JOBS_SHOWN_S = 3600.0  # GET .../jobs keeps a finished job listed this long, with its outcome

# A worker that dies this many times on one file (the machine's memory, a native crash) gives up on it.
MAX_ATTEMPTS = 3
PROGRESS_EVERY_S = 0.5  # how often a running job writes its progress
# Where a worker copies a job's file while it ingests it: a folder named by the worker's process
JOB_FOLDERS = Path(tempfile.gettempdir()) / "docqa-jobs"
JOB_PREFIX = "docqa-job-"


class Ingesting(Protocol):
    """What the queue needs of the service (docqa.service.facade.DocQA)."""

    settings: Settings
    store: Store

    def collection(self, name: str | None = None, *, create: bool = False) -> CollectionRow: ...

    def ingest_sources(
        self,
        sources: list[Source],
        collection: str | None = None,
        progress: ProgressCallback | None = None,
        password: str | None = None,
    ) -> IngestReport: ...


class IngestQueue:
    def __init__(self, qa: Ingesting) -> None:
        if not isinstance(qa.store, PostgresStore) or not qa.settings.database_url:
            raise QueueNotConfiguredError()
        self._qa = qa
        self.rows = IngestJobs(qa.store)
        self.queue = JobQueue(qa.settings.database_url)
        store = qa.settings.ingest.upload_store
        self.objects = S3Uploads(store) if store else None  # else the files wait in their job's row

    def close(self) -> None:
        self.queue.close()

    def enqueue(
        self, collection: str | None, name: str, source: str, data: bytes, metadata: Mapping[str, Any] | None = None
    ) -> IngestJob:
        """Keep the file (and its uploader's catalog fields) in the database and queue its ingestion."""
        coll = self._qa.collection(collection, create=True)
        key = None
        if self.objects is not None:
            key = f"docqa/uploads/{uuid.uuid4().hex}/{name}"
            self.objects.put(key, data)
        job_id = self.rows.add(coll.id, name, source, hashlib.sha256(data).hexdigest(), data, key, metadata)
        try:
            self.queue.enqueue(job_id)
        except Exception as exc:  # Procrastinate's own connection failed: the row says why, the caller too
            self.rows.finish(job_id, None, "could not be queued")
            raise DatabaseUnavailableError(self._qa.store.location, f"queueing failed ({type(exc).__name__})") from exc
        found = self.rows.get(job_id)
        assert found is not None
        return found

    def enqueue_paths(self, paths: list[Path], collection: str | None) -> tuple[list[IngestJob], IngestReport]:
        """Queue every file docqa reads under the paths (folders searched as `docqa ingest` searches them);
        the report holds the paths that were missing and the files skipped by type."""
        sources, missing, skipped = collect_sources(paths)
        jobs = [self.enqueue(collection, s.name, s.key, s.path.read_bytes()) for s in sources]
        return jobs, IngestReport(files=missing, skipped=skipped)

    def job(self, job_id: int, collection: str | None = None) -> IngestJob:
        found = self.rows.get(job_id)
        if found is None or (collection is not None and found.collection_id != self._qa.collection(collection).id):
            raise JobNotFoundError(job_id)
        return found

    def active(self, collection: str | None = None) -> list[IngestJob]:
        return self.rows.active(self._qa.collection(collection).id)

    def recent(self, collection: str | None = None) -> list[IngestJob]:
        """Running jobs and those that ended within FINISHED_JOBS_SHOWN_S, with their outcome."""
        return self.rows.recent(self._qa.collection(collection).id, FINISHED_JOBS_SHOWN_S)

    def run(self, job_id: int) -> None:
        """Ingest one job's file (a worker's handler). Exceptions mean "try again" (the database went away)."""
        job = self.rows.get(job_id)
        if job is None or job.status in ("ready", "failed"):
            return  # deleted with its collection, or already done by an earlier run
        attempts = self.rows.start(job_id)
        if attempts > MAX_ATTEMPTS:
            self.rows.finish(job_id, None, f"a worker stopped {attempts - 1} times while ingesting this file")
            return
        key = self.rows.object_key(job_id)
        data = self.objects.get(key) if key and self.objects is not None else self.rows.data(job_id)
        if data is None:
            self.rows.finish(job_id, None, "the file was not kept in the database")
            return
        folder = process_folder(JOB_FOLDERS, JOB_PREFIX)  # a worker killed mid-job leaves it to the next one
        try:
            path = folder / staged_name(job.name, f"file{Path(job.name).suffix.lower()}")  # pages named as uploaded
            path.write_bytes(data)
            collection = self._qa.store.collection_by_id(job.collection_id)
            report = self._qa.ingest_sources(
                [Source(path, job.source, job.name, self.rows.metadata(job_id))],
                collection.name,
                self._progress(job_id),
            )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        result = report.files[0]
        self.rows.finish(job_id, result.document_id, result.error if result.status == "failed" else None)
        if key and self.objects is not None:  # after the job's end is recorded: a crash before leaves it for a retry
            try:
                self.objects.delete(key)
            except UploadStoreError as exc:  # the document is in; only the uploaded copy stays behind
                logger.warning("ingest job %d: %s; %s was not deleted", job_id, exc, key)
        pages = f"{result.pages} page{'' if result.pages == 1 else 's'}"
        outcome = f"failed: {result.error}" if result.status == "failed" else f"{result.status}, {pages}"
        logger.info("ingest job %d (%s): %s", job_id, job.name, outcome)

    def _progress(self, job_id: int) -> ProgressWriter:
        return ProgressWriter(self.rows, job_id)

    def run_worker(self, concurrency: int, stalled_s: float) -> None:
        clear_stale(JOB_FOLDERS, JOB_PREFIX)  # the copies of workers killed mid-job (kill -9 runs no cleanup)
        self.queue.run_worker(self.run, concurrency, stalled_s)


class ProgressWriter:
    """Ingest progress -> the job's row: embedding, with the pages done out of the file's pages (pages
    count as their chunks are embedded), at most every PROGRESS_EVERY_S."""

    def __init__(self, rows: IngestJobs, job_id: int) -> None:
        self._rows = rows
        self._job = job_id
        self._last = 0.0

    def __call__(self, progress: Progress) -> None:
        if progress.stage != "embedding" or not progress.chunks:
            return
        now = time.monotonic()
        if progress.chunks_embedded and now - self._last < PROGRESS_EVERY_S:
            return
        self._last = now
        done = progress.pages * progress.chunks_embedded // progress.chunks
        self._rows.progress(self._job, "embedding", done, progress.pages, "pages")
