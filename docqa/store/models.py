"""The store's tables as SQLAlchemy models: collections, documents, chunks (with their embeddings)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class CollectionRow(Base):
    __tablename__ = "collections"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    embed_model: Mapped[str | None] = mapped_column(String(500))
    embed_dim: Mapped[int | None] = mapped_column(Integer)
    # the document profiles its questions are read with (names by comma); None: the deployment's
    profiles: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=now)


class DocumentRow(Base):
    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("collection_id", "source"), {"sqlite_autoincrement": True})
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    source: Mapped[str] = mapped_column(Text)  # absolute path, or "upload:<name>" for API uploads
    name: Mapped[str] = mapped_column(String(500))  # what citations show
    sha256: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(Integer)
    pages: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16))  # ready | failed
    error: Mapped[str | None] = mapped_column(Text)
    warnings: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    n_chunks: Mapped[int] = mapped_column(Integer, default=0)
    n_tokens: Mapped[int] = mapped_column(Integer, default=0)
    # How it was read and chunked (ingest.pipeline.ingest_recipe): the same bytes read another way
    # (a newer reader, other chunk sizes) are ingested again. None: a store older than the column.
    recipe: Mapped[str | None] = mapped_column(Text)
    ocr_pages: Mapped[str | None] = mapped_column(Text)  # JSON list of the pages OCR read; None: none
    catalog: Mapped[str | None] = mapped_column(Text)  # JSON object (docqa.store.catalog); None: read before it
    # the rules its derived data (headings, catalog) was read with (docqa.store.derived); None: stale
    derived: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=now)
    updated_at: Mapped[datetime] = mapped_column(default=now, onupdate=now)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "source": self.source,
            "sha256": self.sha256,
            "size_bytes": self.size_bytes,
            "pages": self.pages,
            "status": self.status,
            "error": self.error,
            "warnings": json.loads(self.warnings or "[]"),
            "catalog": json.loads(self.catalog or "{}"),
            "chunks": self.n_chunks,
            "tokens": self.n_tokens,
            "updated_at": self.updated_at.isoformat(),
        }


class ChunkRow(Base):
    __tablename__ = "chunks"
    # AUTOINCREMENT: IDs are never reused, so a stale FAISS vector can never point at a new chunk.
    __table_args__ = {"sqlite_autoincrement": True}  # noqa: RUF012 (SQLAlchemy's declarative form)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    first_page: Mapped[int] = mapped_column(Integer)
    last_page: Mapped[int] = mapped_column(Integer)
    char_start: Mapped[int] = mapped_column(Integer)
    char_end: Mapped[int] = mapped_column(Integer)
    n_tokens: Mapped[int] = mapped_column(Integer)
    page_breaks: Mapped[str] = mapped_column(Text, default="[]")  # JSON [[offset, page], ...]
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary)  # float32, L2-normalised


@dataclass(frozen=True)
class SavedDocument:
    """What save_document wrote: the document, its new chunks and the ones it replaced. twin: the ready
    document with the same bytes that was found instead (asked with unique_content): nothing was written."""

    document_id: int
    chunk_ids: list[int]
    removed_chunk_ids: list[int]
    twin: DocumentRow | None = None
