"""Every document's identity, as the document profiles read it (docqa.core.identity.DocumentReader: a
filing's cover and file name, for instance), kept in memory.

A collection's documents are read once (their head chunk's start and their file name, and further chunks
where the reader asks for them) and refreshed like the document titles when the keyword index changes.
Retrieval matches a question against them (the profiles find the documents it names); the keyword search
asks which profile its document is of (whose favoured titles and head rule then apply). A document no
profile recognises has no identity. The store knows nothing of what an identity holds.
"""

from __future__ import annotations

import threading

from sqlalchemy import text
from sqlalchemy.orm import Session

from docqa.core.identity import DocumentIdentity, DocumentReader
from docqa.store.keyword.tables import IndexTotals
from docqa.store.keyword.term_stats import IndexVersion


class DocumentIdentities:
    """Every document's identity, by collection, kept in step with the keyword index."""

    def __init__(self, reader: DocumentReader) -> None:
        self.reader = reader
        self._lock = threading.Lock()
        self._version = IndexVersion(IndexTotals(-1, -1), -1)
        self._read: dict[int, tuple[int, int, DocumentIdentity | None]] = {}  # document -> (collection, head, id)

    def refresh(self, session: Session, version: IndexVersion) -> None:
        """Reads the documents added or replaced since the last refresh (a document's head chunk ID
        changes when it is replaced); forgets deleted ones."""
        if version == self._version:
            return
        with self._lock:
            current = {
                int(doc): (int(coll), int(head), str(name))
                for doc, coll, head, name in session.execute(
                    text(
                        "SELECT c.document_id, d.collection_id, min(c.id), d.name FROM chunks c "
                        "JOIN documents d ON d.id = c.document_id GROUP BY c.document_id, d.collection_id, d.name"
                    )
                )
            }
            for doc in [
                d for d, (coll, head, _) in self._read.items() if current.get(d, (0, 0, ""))[:2] != (coll, head)
            ]:
                del self._read[doc]
            for doc, (coll, head, name) in current.items():
                if doc not in self._read:
                    self._read[doc] = (coll, head, self._identity(session, doc, head, name))
            self._version = version

    def profile_of(self, document_id: int) -> str | None:
        """The profile whose kind the document is (read at the last refresh); None: no profile's."""
        with self._lock:
            entry = self._read.get(document_id)
        return entry[2].profile if entry is not None and entry[2] is not None else None

    def of_collection(self, collection_id: int) -> dict[int, DocumentIdentity]:
        """The collection's identified documents (document ID -> identity), as the last refresh read them."""
        with self._lock:
            return {
                doc: identity
                for doc, (coll, _, identity) in self._read.items()
                if coll == collection_id and identity is not None
            }

    def _identity(self, session: Session, document_id: int, head: int, name: str) -> DocumentIdentity | None:
        if not self.reader.head_chars:
            return None
        start = session.execute(
            text("SELECT substr(text, 1, :n) FROM chunks WHERE id = :id"), {"n": self.reader.head_chars, "id": head}
        ).scalar()
        return self.reader.identity(name, start or "", lambda phrases: _chunks_saying(session, document_id, phrases))


def _chunks_saying(session: Session, document_id: int, phrases: tuple[str, ...]) -> list[str]:
    """The texts of the document's chunks, in order, whose lowercased text holds one of `phrases` (lowercase);
    the phrases are bound as LIKE patterns, so SQLite and Postgres read them alike."""
    patterns = {f"p{n}": f"%{phrase}%" for n, phrase in enumerate(phrases)}
    condition = " OR ".join(f"lower(text) LIKE :{name}" for name in patterns)
    query = text(f"SELECT text FROM chunks WHERE document_id = :d AND ({condition}) ORDER BY id")
    return list(session.execute(query, {"d": document_id, **patterns}).scalars())
