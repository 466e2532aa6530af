"""Which filings a question is about, by the identities their cover pages give (docqa.store.keyword.filings).

A collection's filings are read once (their head chunk's start and their file name) and kept in memory,
refreshed like the document titles when the keyword index changes. A question that names a company
narrows the search to that company's filings, then to those reporting on the latest fiscal year it names,
then to its quarter and form, each step only where some filing is left. The keyword search then takes
its best-scoring document among those (docqa.store.keyword.index.search). Documents that are not filings
(contracts, judgments) have no identity and are never chosen this way: their search is as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.orm import Session

from docqa.store.keyword import filings
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
                    self._read[doc] = (coll, head, filings.read_identity(name, start or ""))
            self._version = version

    def is_filing(self, document_id: int) -> bool:
        """Whether the document's cover or file name says it is a filing (read at the last refresh)."""
        with self._lock:
            entry = self._read.get(document_id)
        return entry is not None and entry[2] is not None

    def candidates(self, collection_id: int, question: str) -> set[int]:
        """The filings a question is about (empty when it names no company that filed one here)."""
        with self._lock:
            filed = {
                doc: identity
                for doc, (coll, _, identity) in self._read.items()
                if coll == collection_id and identity is not None
            }
        named = {doc: identity for doc, identity in filed.items() if filings.named_in(question, identity)}
        # A company is one company in all its filings: named by a symbol that only its newer covers list
        # (covers carry trading symbols since 2019), its older filings are named too.
        names = {name for identity in named.values() for name in identity.names}
        named |= {doc: identity for doc, identity in filed.items() if names & set(identity.names)}
        asked = filings.asked_period(question)
        checks: list[Callable[[filings.FilingIdentity], bool]] = []
        if asked.latest_year is not None:
            checks.append(lambda identity: asked.latest_year in identity.years)
        if asked.period_end is not None:
            checks.append(lambda identity: asked.period_end in identity.period_ends)
        if asked.quarter is not None:
            checks.append(lambda identity: identity.quarter == asked.quarter)
        if asked.form is not None:
            checks.append(lambda identity: identity.form == asked.form)
        for check in checks:
            narrowed = {doc: identity for doc, identity in named.items() if check(identity)}
            if narrowed:
                named = narrowed
        return set(named)
