"""Uploaded originals in Postgres (`document_originals`, migration 0006): one row per content, named by its
SHA-256, written by whichever process ingested the upload (a worker, for a queued one) and read by any API
process that serves the document's file (docqa.service.originals keeps a local copy of what it read)."""

from __future__ import annotations

from sqlalchemy import text

from docqa.store.models import now
from docqa.store.postgres.store import PostgresStore


class PostgresOriginals:
    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def put(self, sha256: str, data: bytes) -> None:
        """Keep the bytes unless a row for them is there already (two workers with one file: one row)."""
        with self._store.session() as s:
            s.execute(
                text(
                    "INSERT INTO document_originals (sha256, data, kept_at) VALUES (:sha, :data, :at) "
                    "ON CONFLICT (sha256) DO NOTHING"
                ),
                {"sha": sha256, "data": data, "at": now()},
            )

    def get(self, sha256: str) -> bytes | None:
        with self._store.session() as s:
            found = s.execute(text("SELECT data FROM document_originals WHERE sha256 = :sha"), {"sha": sha256})
            data = found.scalar()
        return bytes(data) if data is not None else None

    def delete(self, sha256: str) -> None:
        with self._store.session() as s:
            s.execute(text("DELETE FROM document_originals WHERE sha256 = :sha"), {"sha": sha256})

    def kept(self) -> set[str]:
        with self._store.session() as s:
            return {str(sha) for sha in s.scalars(text("SELECT sha256 FROM document_originals"))}
