"""What ingestion takes and reports: the files to read (Source), each file's result, the run's report
and its progress. Plain data, shared by the ingest pipeline, the service and the CLI and API that show it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Status = Literal["added", "updated", "unchanged", "failed"]


@dataclass
class FileResult:
    path: str
    status: Status
    document_id: int | None = None
    pages: int = 0
    chunks: int = 0
    tokens: int = 0
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    tokens_embedded: int = 0  # in the embedder's tokens, chunk overlaps included (batch padding not)


@dataclass
class IngestReport:
    files: list[FileResult] = field(default_factory=list)
    seconds: float = 0.0
    embeddings: bool = True
    # where the ingesting thread spent its time: what is not here overlapped with the embedding
    seconds_embedding: float = 0.0
    seconds_waiting_for_reads: float = 0.0
    seconds_waiting_for_writes: float = 0.0
    skipped: list[str] = field(default_factory=list)  # files in the folders given, of a type docqa does not read
    dropped: str | None = None  # the collection this ingest made and did not keep: none of its files could be read

    def count(self, status: Status) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def tokens_embedded(self) -> int:
        return sum(f.tokens_embedded for f in self.files)

    def as_dict(self) -> dict[str, object]:
        return {
            "added": self.count("added"),
            "updated": self.count("updated"),
            "unchanged": self.count("unchanged"),
            "failed": [{"path": f.path, "error": f.error} for f in self.files if f.status == "failed"],
            "collection_dropped": self.dropped,
            "chunks": sum(f.chunks for f in self.files if f.status in ("added", "updated")),
            "embeddings": self.embeddings,
            "seconds": round(self.seconds, 2),
            "seconds_embedding": round(self.seconds_embedding, 2),
            "seconds_waiting_for_reads": round(self.seconds_waiting_for_reads, 2),
            "seconds_waiting_for_writes": round(self.seconds_waiting_for_writes, 2),
            "tokens_embedded": self.tokens_embedded,
            "files": [asdict(f) for f in self.files],
            "skipped": self.skipped_by_type(),
        }

    def skipped_by_type(self) -> dict[str, int]:
        """Skipped files counted by extension, the most first: {".docx": 12, "(none)": 1}."""
        counts: dict[str, int] = {}
        for path in self.skipped:
            kind = Path(path).suffix.lower() or "(none)"
            counts[kind] = counts.get(kind, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


@dataclass(frozen=True)
class Progress:
    """What a progress display needs; `stage` is reading, embedding or done."""

    stage: Literal["reading", "embedding", "done"]
    path: str
    file_index: int
    file_count: int
    pages: int = 0
    chunks: int = 0
    chunks_embedded: int = 0
    tokens_per_s: float = 0.0


ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True)
class Source:
    """A file to ingest and how the store should know it."""

    path: Path
    key: str  # unique within a collection: the absolute path, or "upload:<name>"
    name: str  # shown in citations
    metadata: Mapping[str, Any] | None = None  # the uploader's catalog fields (docqa.store.catalog.user_fields)
