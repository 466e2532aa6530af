"""Every filing's identity, as its cover page and file name give it (docqa.store.keyword.filings), kept in memory.

A collection's filings are read once (their head chunk's start and their file name) and refreshed like the
document titles when the keyword index changes. Retrieval matches a question against them
(docqa.retrieval.understanding.filers) to find the filings it names; the keyword search asks whether its
document is an SEC filing (whose standard sections then apply). Documents that are not filings (contracts,
judgments) have no identity.
"""

from __future__ import annotations

import dataclasses
import threading

from sqlalchemy import text
from sqlalchemy.orm import Session

from docqa.store.keyword import filings
from docqa.store.keyword.fiscal_naming import fiscal_years_named, needs_reading
from docqa.store.keyword.fiscal_quarter import needs_quarter, quarter_from_balance_sheet
from docqa.store.keyword.tables import IndexTotals
from docqa.store.keyword.term_stats import IndexVersion


class FilingIdentities:
    """Every filing's identity, by collection, kept in step with the keyword index."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version = IndexVersion(IndexTotals(-1, -1), -1)
        self._read: dict[int, tuple[int, int, filings.FilingIdentity | None]] = {}  # document -> (collection, head, id)

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
                    start = session.execute(
                        text("SELECT substr(text, 1, :n) FROM chunks WHERE id = :id"),
                        {"n": filings.HEAD_CHARS, "id": head},
                    ).scalar()
                    identity = _with_fiscal_naming(session, doc, filings.read_identity(name, start or ""))
                    self._read[doc] = (coll, head, _with_fiscal_quarter(session, doc, identity))
            self._version = version

    def is_filing(self, document_id: int) -> bool:
        """Whether the document's cover or file name says it is a filing (read at the last refresh)."""
        with self._lock:
            entry = self._read.get(document_id)
        return entry is not None and entry[2] is not None

    def of_collection(self, collection_id: int) -> dict[int, filings.FilingIdentity]:
        """The collection's filings (document ID -> identity), as the last refresh read them."""
        with self._lock:
            return {
                doc: identity
                for doc, (coll, _, identity) in self._read.items()
                if coll == collection_id and identity is not None
            }


def _with_fiscal_naming(
    session: Session, document_id: int, identity: filings.FilingIdentity | None
) -> filings.FilingIdentity | None:
    """The identity with the fiscal year its filer names its period by, where the period ends early in a
    year and the text says so (docqa.store.keyword.fiscal_naming): read from the chunks that define a year."""
    if identity is None or not needs_reading(identity.form, identity.period_ends):
        return identity
    texts = _chunks_saying(
        session, document_id, ("weeks ended", "(fiscal", "(\u201cfiscal", '("fiscal', "fiscal 20", "fiscal year 20")
    )
    named = fiscal_years_named(texts, identity.period_ends)
    return dataclasses.replace(identity, fiscal_years=named, years=identity.years | named) if named else identity


def _with_fiscal_quarter(
    session: Session, document_id: int, identity: filings.FilingIdentity | None
) -> filings.FilingIdentity | None:
    """A quarterly report's fiscal quarter and year where its file name does not give them, from its balance
    sheet's dates (docqa.store.keyword.fiscal_quarter): read from the chunks that name a balance sheet."""
    if not needs_quarter(identity):
        return identity
    texts = _chunks_saying(
        session, document_id, ("balance sheet", "statement of financial position", "statements of financial")
    )
    found = quarter_from_balance_sheet(texts, next(iter(identity.period_ends)))
    if found is None:
        return identity
    quarter, fiscal_year = found
    return dataclasses.replace(identity, quarter=quarter, years=identity.years | {fiscal_year})


def _chunks_saying(session: Session, document_id: int, phrases: tuple[str, ...]) -> list[str]:
    """The texts of the document's chunks, in order, whose lowercased text holds one of `phrases` (lowercase);
    the phrases are bound as LIKE patterns, so SQLite and Postgres read them alike."""
    patterns = {f"p{n}": f"%{phrase}%" for n, phrase in enumerate(phrases)}
    condition = " OR ".join(f"lower(text) LIKE :{name}" for name in patterns)
    query = text(f"SELECT text FROM chunks WHERE document_id = :d AND ({condition}) ORDER BY id")
    return list(session.execute(query, {"d": document_id, **patterns}).scalars())
