"""The generic profile: no knowledge of any kind of document. What docqa does for patents, medical records
or German contracts: the question's own words, the documents' own titles and headings (docqa.store.keyword)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from docqa.core.identity import ChunksSaying, DocumentIdentity
from docqa.profiles.protocol import NO_HINTS, Hints


class GenericProfile:
    """A profile that recognises no document and reads nothing in a question; a new profile starts from it."""

    name = "generic"
    version = 1
    description = "any document: the question's words, the document's titles and headings (always on)"
    head_chars = 0

    def identity(self, file_name: str, head: str, chunks_saying: ChunksSaying) -> DocumentIdentity | None:
        return None

    def catalog(self, file_name: str, head: str, texts: Sequence[str]) -> dict[str, Any] | None:
        return None

    def understand(self, question: str, identities: Mapping[int, DocumentIdentity] | None) -> Hints:
        return NO_HINTS

    def drafting_words(self, question: str) -> tuple[str, ...]:
        return ()
