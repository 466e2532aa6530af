"""A question as retrieval understands it: built once (docqa.retrieval.understanding) and handed down to the
store's index primitives and to the prompt windows, so that no layer below reads the question's text again.

Plain data: the terms the index is searched by, the clauses the document's title is matched in, the period
and form asked about, the filings the question names, and the titles of the statements and standard
sections that hold what it asks.
"""

from __future__ import annotations

from dataclasses import dataclass

Titles = tuple[str, ...]  # the titles, lowercased, that one statement's or section's heading may carry


@dataclass(frozen=True)
class AskedPeriod:
    """The period and form a question names."""

    latest_year: int | None = None
    quarter: int | None = None
    form: str | None = None  # "10-K", "10-Q", "8-K", "20-F", "earnings", "proxy"
    period_end: tuple[int, int] | None = None  # (year, month): "as of June 30, 2023", "the quarter ended July 2023"
    most_recent: bool = False  # "last year", "the latest 10-K", "most recent quarter": no period named, the newest


@dataclass(frozen=True)
class Query:
    """What a question asks, in the index's terms. Every field but `terms` may be left empty: a text that is
    not a question (an answer whose best page is wanted) is a Query of its terms alone."""

    terms: tuple[str, ...]  # lowercased words (CJK as bigrams), stopwords and repeats left out, in order
    clauses: tuple[tuple[str, ...], ...] = ()  # the same words by clause: where runs naming a document are sought
    period: AskedPeriod = AskedPeriod()
    # the filings it names (its company's, narrowed to the period and form asked); empty: it names none here
    filings: frozenset[int] = frozenset()
    # where it names no company but a period: the filings reporting on that period (any company's), which
    # replace a first-pass pick that is a filing of another period; empty otherwise
    period_filings: frozenset[int] = frozenset()
    statements: tuple[Titles, ...] = ()  # the financial statements (or Chinese profile sections) it needs
    filing_sections: tuple[Titles, ...] = ()  # the standard sections its topic lives in, within an SEC filing
    other_sections: tuple[Titles, ...] = ()  # those that apply to any document (the CSRC's, for Chinese text)
    cover: bool = False  # it asks what a filing's cover states (registered securities, exchanges, filer status)
    past_head: bool = False  # what it asks sits in a filing's statements or sections past its cover and Item 1
