"""Question understanding: a question's text read once, into the typed Query (docqa.core.query) that the
store's index primitives and the prompt windows take.

What is read, and by which module: the search terms and clauses (by the index's own analyzer,
docqa.store.keyword.lexical, so that query and index split words alike), the period and form asked
(periods), the filings named by company, symbol or initials (filers, against the identities the store
read from each cover), the financial statements needed (statements) and the standard sections that hold
the topic (sections). The last two are maps written from the forms' and standards' own titles, not from
any question set (docs/retrieval.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from docqa.core.query import Query
from docqa.retrieval.understanding.filers import named_filings, period_filings
from docqa.retrieval.understanding.periods import asked_period
from docqa.retrieval.understanding.sections import (
    asked_sections,
    asks_about_the_cover,
    asks_for_reasons,
    past_the_head,
)
from docqa.retrieval.understanding.statements import FINANCIAL_STATEMENTS, asked_statements
from docqa.store.keyword import lexical
from docqa.store.keyword.filings import FilingIdentity


def understand(question: str, filings: Mapping[int, FilingIdentity] | None = None) -> Query:
    """The Query a question asks; `filings`: the identities of the filings it may name (document ID ->
    identity, one collection's; none: it names none)."""
    period = asked_period(question)
    filing_sections, other_sections = asked_sections(question)
    statements, cover = asked_statements(question), asks_about_the_cover(question)
    if asks_for_reasons(filing_sections):
        statements = tuple(s for s in statements if s not in FINANCIAL_STATEMENTS)
    named = named_filings(question, period, filings) if filings else frozenset()
    return Query(
        terms=tuple(lexical.query_terms(question)),
        clauses=tuple(tuple(clause) for clause in lexical.word_sequences(question)),
        period=period,
        filings=named,
        period_filings=period_filings(named, period, filings) if filings else frozenset(),
        statements=statements,
        filing_sections=filing_sections,
        other_sections=other_sections,
        cover=cover,
        # not a Chinese filing's profile: its overview states it, and its head holds that
        past_head=past_the_head(any(s in FINANCIAL_STATEMENTS for s in statements), filing_sections, cover),
    )
