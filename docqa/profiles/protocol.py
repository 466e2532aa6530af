"""The protocol every document profile implements (docqa.profiles)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from docqa.core.identity import ChunksSaying, DocumentIdentity
from docqa.core.query import FavouredTitles, HeadRule


@dataclass(frozen=True)
class Hints:
    """What one profile reads in a question (docqa.core.query.Query has the same fields, merged)."""

    named: frozenset[int] = frozenset()  # the documents it names
    narrowed: frozenset[int] = frozenset()  # the documents of what it narrows to, where it names none
    favoured: tuple[FavouredTitles, ...] = ()  # the section titles that hold the answer, with their weights
    head: HeadRule = "auto"  # how this profile's documents' head chunk is treated


NO_HINTS = Hints()


class Profile(Protocol):
    """One kind of document. Every method is a pure function of text and the identities the profile read."""

    @property
    def name(self) -> str:
        """A short, unique name ("sec"); identities carry it, settings name it (DOCQA_RETRIEVAL_PROFILES)."""
        ...

    @property
    def version(self) -> int:
        """The version of the profile's rules: raised when they read a document differently."""
        ...

    @property
    def description(self) -> str:
        """One line for `docqa profiles`: what documents it knows and where its knowledge comes from."""
        ...

    @property
    def head_chars(self) -> int:
        """How much of a document's first chunk its identity is read from (0: it reads none)."""
        ...

    def identity(self, file_name: str, head: str, chunks_saying: ChunksSaying) -> DocumentIdentity | None:
        """The document's identity, None where it is not of this profile's kind."""
        ...

    def catalog(self, file_name: str, head: str, texts: Sequence[str]) -> dict[str, Any] | None:
        """The catalog fields read at ingest, None where it is not of this profile's kind."""
        ...

    def understand(self, question: str, identities: Mapping[int, DocumentIdentity] | None) -> Hints:
        """What the question asks of this profile's documents; `identities`: this profile's documents in the
        collection searched (None: the search is within one document, so none is named)."""
        ...

    def drafting_words(self, question: str) -> tuple[str, ...]:
        """Words a document writes what the question asks about in (a clause's drafting words), added to each
        document's search of a question over a whole collection; () where the profile has none."""
        ...
