"""Question understanding: a question's text read once, into the typed Query (docqa.core.query) that the
store's index primitives and the prompt windows take.

The search terms and clauses are read here, by the index's own analyzer (docqa.store.keyword.lexical, so
that query and index split words alike); what the question asks of a kind of document (the filings it names,
the statements and sections that hold the answer, how a document's head is treated) is read by the document
profiles switched on (docqa.profiles), each against the identities of its own documents.
"""

from __future__ import annotations

from collections.abc import Mapping

from docqa.core.identity import DocumentIdentity
from docqa.core.query import Query
from docqa.profiles.registry import ProfileSet
from docqa.store.keyword import lexical


def understand(question: str, profiles: ProfileSet, identities: Mapping[int, DocumentIdentity] | None = None) -> Query:
    """The Query a question asks; `identities`: the documents the profiles recognised in the collection
    searched (document ID -> identity; None: the search is within one document, so none is named)."""
    hints, head_in = profiles.understand(question, identities)
    return Query(
        terms=tuple(lexical.query_terms(question)),
        clauses=tuple(tuple(clause) for clause in lexical.word_sequences(question)),
        named=hints.named,
        narrowed=hints.narrowed,
        favoured=hints.favoured,
        head=hints.head,
        head_in=head_in,
    )
