"""Ingestion jobs' rows (`ingest_jobs`): the uploaded file, kept in Postgres until a worker has ingested it,
and what the job is doing, which every API process reads for its status URL and document lists.

The file lives in the database by default, so a worker on any machine reads what an API process on
another received; the row's `data` is emptied once the job ends. Queueing itself is Procrastinate's
(docqa.store.postgres.job_queue); these rows are what users see.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import text

from docqa.store.postgres.store import PostgresStore

JobStatus = Literal["queued", "parsing", "embedding", "ready", "failed"]
ACTIVE = ("queued", "parsing", "embedding")


@dataclass(frozen=True)
class IngestJob:
    id: int
    collection_id: int
    name: str
    source: str
    sha256: str
    size_bytes: int
    status: str
    done: int
    total: int
    unit: str
    attempts: int
    document_id: int | None
    error: str | None
    updated_at: datetime

    def as_dict(self) -> dict[str, Any]:
        return {
            "job_id": self.id,
            "name": self.name,
            "status": self.status,
            "progress": {"done": self.done, "total": self.total, "unit": self.unit},
            "attempts": self.attempts,
            "document_id": self.document_id,
            "error": self.error,
            "updated_at": self.updated_at.isoformat(),
        }


_COLUMNS = (
    "id, collection_id, name, source, sha256, size_bytes, status, done, total, unit, attempts, document_id, "
    "error, updated_at"
)


class IngestJobs:
    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def add(
        self,
        collection_id: int,
        name: str,
        source: str,
        sha256: str,
        data: bytes,
        object_key: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """A queued job; its file in the row, or (object_key) in the object store, put there by the caller;
        the uploader's catalog fields with it."""
        with self._store.session() as s:
            found = s.execute(
                text(
                    "INSERT INTO ingest_jobs(collection_id, name, source, sha256, size_bytes, status, data, "
                    "object_key, metadata) VALUES (:cid, :name, :source, :sha, :size, 'queued', :data, :key, :meta) "
                    "RETURNING id"
                ),
                {
                    "cid": collection_id,
                    "name": name,
                    "source": source,
                    "sha": sha256,
                    "size": len(data),
                    "data": None if object_key else data,
                    "key": object_key,
                    "meta": json.dumps(dict(metadata), ensure_ascii=False) if metadata else None,
                },
            ).scalar_one()
        return int(found)

    def metadata(self, job_id: int) -> dict[str, Any] | None:
        with self._store.session() as s:
            found = s.execute(text("SELECT metadata FROM ingest_jobs WHERE id = :id"), {"id": job_id}).scalar()
        return dict(json.loads(found)) if found else None

    def object_key(self, job_id: int) -> str | None:
        with self._store.session() as s:
            found = s.execute(text("SELECT object_key FROM ingest_jobs WHERE id = :id"), {"id": job_id}).scalar()
        return str(found) if found else None

    def get(self, job_id: int) -> IngestJob | None:
        with self._store.session() as s:
            row = s.execute(text(f"SELECT {_COLUMNS} FROM ingest_jobs WHERE id = :id"), {"id": job_id}).one_or_none()
        return IngestJob(*row) if row is not None else None

    def active(self, collection_id: int) -> list[IngestJob]:
        """The collection's jobs still queued or running, oldest first."""
        with self._store.session() as s:
            rows = s.execute(
                text(
                    f"SELECT {_COLUMNS} FROM ingest_jobs WHERE collection_id = :cid AND status IN "
                    "('queued', 'parsing', 'embedding') ORDER BY id"
                ),
                {"cid": collection_id},
            ).all()
        return [IngestJob(*row) for row in rows]

    def recent(self, collection_id: int, finished_within_s: float) -> list[IngestJob]:
        """The collection's jobs still queued or running, and those that ended within the last
        finished_within_s seconds (ready or failed, with their outcome), oldest first."""
        with self._store.session() as s:
            rows = s.execute(
                text(
                    f"SELECT {_COLUMNS} FROM ingest_jobs WHERE collection_id = :cid AND (status IN "
                    "('queued', 'parsing', 'embedding') OR updated_at > now() - make_interval(secs => :secs)) "
                    "ORDER BY id"
                ),
                {"cid": collection_id, "secs": finished_within_s},
            ).all()
        return [IngestJob(*row) for row in rows]

    def data(self, job_id: int) -> bytes | None:
        with self._store.session() as s:
            found = s.execute(text("SELECT data FROM ingest_jobs WHERE id = :id"), {"id": job_id}).scalar()
        return bytes(found) if found is not None else None

    def start(self, job_id: int) -> int:
        """A worker takes the job (again, after a crash): parsing, one attempt more; returns attempts."""
        with self._store.session() as s:
            found = s.execute(
                text(
                    "UPDATE ingest_jobs SET status = 'parsing', done = 0, total = 0, unit = 'pages', "
                    "attempts = attempts + 1, updated_at = now() WHERE id = :id RETURNING attempts"
                ),
                {"id": job_id},
            ).scalar()
        return int(found or 0)

    def progress(self, job_id: int, status: JobStatus, done: int, total: int, unit: str) -> None:
        with self._store.session() as s:
            s.execute(
                text(
                    "UPDATE ingest_jobs SET status = :status, done = :done, total = :total, unit = :unit, "
                    "updated_at = now() WHERE id = :id AND status IN ('queued', 'parsing', 'embedding')"
                ),
                {"id": job_id, "status": status, "done": done, "total": total, "unit": unit},
            )

    def finish(self, job_id: int, document_id: int | None, error: str | None) -> None:
        """ready (with its document) or failed (with the reason); the file's bytes are dropped. A ready job's
        progress reads done: a file ingested without embeddings never reported its pages embedded."""
        with self._store.session() as s:
            s.execute(
                text(
                    "UPDATE ingest_jobs SET status = :status, document_id = :doc, error = :error, data = NULL, "
                    "done = CASE WHEN :ready THEN total ELSE done END, updated_at = now() WHERE id = :id"
                ),
                {
                    "id": job_id,
                    "status": "failed" if error else "ready",
                    "doc": document_id,
                    "error": error,
                    "ready": error is None,
                },
            )
