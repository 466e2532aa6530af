"""What a document is, as a document profile reads it from its file name and head (docqa.profiles): the store
keeps every document's identity beside the keyword index and hands it back to retrieval, without knowing what
it holds. A document no profile recognises has none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

# the texts of a document's chunks, in order, that hold one of these lowercase phrases
ChunksSaying = Callable[[tuple[str, ...]], list[str]]


class DocumentIdentity(Protocol):
    """A profile's reading of one document; the profile's own type holds the rest."""

    @property
    def profile(self) -> str:
        """The name of the profile that read it."""
        ...

    @property
    def names(self) -> tuple[tuple[str, ...], ...]:
        """Its issuer's names (a filing's company), each as lowercased words; () where it names none."""
        ...


class DocumentReader(Protocol):
    """What the store asks of the profiles at ingest (the catalog entry) and when its index changed (each
    document's identity). docqa.profiles.registry.ProfileSet implements it."""

    @property
    def head_chars(self) -> int:
        """How much of a document's first chunk the identity is read from."""
        ...

    @property
    def version_tag(self) -> str:
        """The readers and their rules' versions ("sec@1,..."): a document read by others is stale."""
        ...

    def identity(self, file_name: str, head: str, chunks_saying: ChunksSaying) -> DocumentIdentity | None:
        """The document's identity; `chunks_saying` reads further chunks where the head is not enough."""
        ...

    def catalog(self, file_name: str, head: str, texts: Sequence[str]) -> dict[str, Any] | None:
        """The catalog fields a profile reads (company, form, fiscal year, ...); None: no profile knows it."""
        ...


class NoReader:
    """A reader that recognises nothing: the store without profiles (every document generic)."""

    head_chars = 0
    version_tag = "none"

    def identity(self, file_name: str, head: str, chunks_saying: ChunksSaying) -> DocumentIdentity | None:
        return None

    def catalog(self, file_name: str, head: str, texts: Sequence[str]) -> dict[str, Any] | None:
        return None


NO_READER = NoReader()
