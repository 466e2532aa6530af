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


def understand(
    question: str,
    profiles: ProfileSet,
    identities: Mapping[int, DocumentIdentity] | None = None,
    scoped: bool = False,
) -> Query:
    """The Query a question asks; `identities`: the documents the profiles recognised in the collection
    searched (document ID -> identity; None: none known). `scoped`: the search is within one document, so the
    documents the question names are not kept (a profile still reads them, to tell a filer's name from a topic)."""
    hints, head_in = profiles.understand(question, identities)
    return Query(
        terms=tuple(lexical.query_terms(question)),
        clauses=tuple(tuple(clause) for clause in lexical.word_sequences(question)),
        named=frozenset() if scoped else hints.named,
        narrowed=frozenset() if scoped else hints.narrowed,
        favoured=hints.favoured,
        head=hints.head,
        head_in=head_in,
    )
