"""The SEC filings profile: 10-Ks, 10-Qs, 8-Ks, 20-Fs and results releases.

What it knows, and where from: a filing's identity from its cover (the forms' cover pages: registrant, period,
Section 12(b) securities; a release's headline) and file name (covers); the fiscal year a filer names a period
ending early in a calendar year by (fiscal_naming) and a 10-Q's quarter from its balance sheet's dates
(fiscal_quarter); the period and form a question names (periods) and the filers it names (filers); the
financial statement a metric is read from (statements: the statements' standard titles and line items) and
the Regulation S-K item or US GAAP note that holds a topic (sections). The weights are chosen by company-grouped
cross-validation (`python -m bench.crossval`, docs/benchmarks/retrieval.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docqa.core.identity import ChunksSaying, DocumentIdentity
from docqa.core.query import FavouredTitles, HeadRule
from docqa.profiles.protocol import Hints
from docqa.profiles.sec import covers
from docqa.profiles.sec.catalog import filing_catalog
from docqa.profiles.sec.filers import filing_hints, without_names
from docqa.profiles.sec.fiscal_naming import fiscal_years_named, needs_reading
from docqa.profiles.sec.fiscal_quarter import needs_quarter, quarter_from_balance_sheet
from docqa.profiles.sec.identity import FilingIdentity
from docqa.profiles.sec.sections import asked_sections, asks_about_the_cover, asks_for_reasons, past_the_head
from docqa.profiles.sec.statements import FINANCIAL_STATEMENTS, asked_statements

NAME = "sec"
_FISCAL_YEAR_PHRASES = ("weeks ended", "(fiscal", "(\u201cfiscal", '("fiscal', "fiscal 20", "fiscal year 20")
_BALANCE_SHEET_PHRASES = ("balance sheet", "statement of financial position", "statements of financial")


@dataclass(frozen=True)
class SecWeights:
    """What the favoured titles weigh (each a share of the title's IDF, docqa.store.keyword.passage_bm25)."""

    statement: float = 8.0  # a heading that titles a financial statement the question needs
    section: float = 3.0  # one that titles the S-K item or standard note holding the question's topic
    # 1: a topic is also asked by the words read in dev sets' misses (docqa.profiles.sec.topics); 0: by the
    # forms' and standards' own words alone
    words_from_misses: int = 1


class SecProfile:
    """SEC filings and results releases (docqa.profiles.sec)."""

    name = NAME
    version = 1
    description = (
        "SEC filings (10-K, 10-Q, 8-K, 20-F) and results releases: covers, fiscal periods, filers named in a "
        "question, financial statements and Regulation S-K items"
    )
    head_chars = covers.HEAD_CHARS

    def __init__(self, weights: SecWeights = SecWeights()) -> None:
        self.weights = weights

    def identity(self, file_name: str, head: str, chunks_saying: ChunksSaying) -> DocumentIdentity | None:
        identity = covers.read_identity(file_name, head)
        if identity is None:
            return None
        return _with_fiscal_quarter(_with_fiscal_naming(identity, chunks_saying), chunks_saying)

    def catalog(self, file_name: str, head: str, texts: Sequence[str]) -> dict[str, Any] | None:
        identity = covers.read_identity(file_name, head)
        return filing_catalog(file_name, identity, head, texts) if identity is not None else None

    def understand(self, question: str, identities: Mapping[int, DocumentIdentity] | None) -> Hints:
        named, narrowed = filing_hints(question, identities)
        # a filer's name is no topic: "Best Buy", "General Motors", "Equity Residential"
        topic = without_names(question, [name for doc in named for name in _names(identities, doc)])
        from_misses = bool(self.weights.words_from_misses)
        sections = asked_sections(topic, from_misses)
        statements, cover = asked_statements(topic, from_misses), asks_about_the_cover(topic)
        if asks_for_reasons(sections):
            statements = tuple(s for s in statements if s not in FINANCIAL_STATEMENTS)
        past_head = past_the_head(any(s in FINANCIAL_STATEMENTS for s in statements), sections, cover)
        head: HeadRule = "first" if cover else "never" if past_head else "auto"
        return Hints(
            named=named,
            narrowed=narrowed,
            favoured=(
                *(FavouredTitles(s, self.weights.statement, marks_page=True) for s in statements),
                *(FavouredTitles(s, self.weights.section, only_in=NAME) for s in sections),
            ),
            head=head,
        )

    def drafting_words(self, question: str) -> tuple[str, ...]:
        return ()


def _names(identities: Mapping[int, DocumentIdentity] | None, document_id: int) -> tuple[tuple[str, ...], ...]:
    identity = (identities or {}).get(document_id)
    return identity.names if identity is not None else ()


def _with_fiscal_naming(identity: FilingIdentity, chunks_saying: ChunksSaying) -> FilingIdentity:
    """The identity with the fiscal year its filer names its period by, where the period ends early in a
    year and the text says so (docqa.profiles.sec.fiscal_naming): read from the chunks that define a year."""
    if not needs_reading(identity.form, identity.period_ends):
        return identity
    named = fiscal_years_named(chunks_saying(_FISCAL_YEAR_PHRASES), identity.period_ends)
    return dataclasses.replace(identity, fiscal_years=named, years=identity.years | named) if named else identity


def _with_fiscal_quarter(identity: FilingIdentity, chunks_saying: ChunksSaying) -> FilingIdentity:
    """A quarterly report's fiscal quarter and year where its file name does not give them, from its balance
    sheet's dates (docqa.profiles.sec.fiscal_quarter): read from the chunks that name a balance sheet."""
    if not needs_quarter(identity):
        return identity
    found = quarter_from_balance_sheet(chunks_saying(_BALANCE_SHEET_PHRASES), next(iter(identity.period_ends)))
    if found is None:
        return identity
    quarter, fiscal_year = found
    return dataclasses.replace(identity, quarter=quarter, years=identity.years | {fiscal_year})
