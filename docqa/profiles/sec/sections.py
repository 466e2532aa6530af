"""Which standard section of a filing holds what a question asks about, so passages under that section's
heading rank first within the filing.

Every SEC filer lays its reports out by the same items (Regulation S-K; Form 10-K Items 1-16, Form 10-Q
Parts I and II, Form 8-K Items 1.01-9.01), and the notes to its statements carry the titles that US GAAP's
topics give them (Segment Reporting, Debt, Income Taxes, ...). (Chinese filings' standard sections are the
Chinese filings profile's: docqa.profiles.csrc.sections.) An analyst's question names the topic in
their own words ("ongoing legal battles", "who are its competitors", "buybacks"), not the item's title
("Legal Proceedings", "Competition", "Issuer Purchases of Equity Securities"); BM25 then ranks whatever page
repeats the words. The map (docqa.profiles.sec.topics) goes from a topic's common words to the titles of the
section(s) that hold it: each entry names the form item or standard it comes from, and the words added after
reading a dev set's misses are kept apart and marked so; what they gain is measured by company-grouped
cross-validation (docs/benchmarks/retrieval.md). The store's second pass
adds a bonus to passages under those headings (docqa.store.keyword.passage_bm25).

Pure functions of the question's text.
"""

from __future__ import annotations

import re

from docqa.core.query import Titles
from docqa.profiles.matching import asking_pattern, specific_sections
from docqa.profiles.sec.topics import BUSINESS, RESULTS_OF_OPERATIONS, SECTIONS, Topic

# What a 10-K's or 10-Q's cover page states (the forms' cover: the securities registered under Section 12(b)
# with their trading symbols and exchanges, the filer's status, the market value held by non-affiliates).
_COVER = re.compile(
    r"registered (?:to trade|for trading|pursuant to|under section 12)|section 12\(b\)|national securities exchange"
    r"|(?:large )?accelerated filer|smaller reporting company|emerging growth company|shell company"
    r"|(?:held by )?non-?affiliates|state of incorporation|irs employer",
    re.IGNORECASE,
)
_BUSINESS_TITLES = frozenset(topic.titles for topic in BUSINESS)


def _patterns(topics: tuple[Topic, ...], words_from_misses: bool) -> tuple[tuple[Titles, re.Pattern[str]], ...]:
    """Each topic's words as one pattern (those read in dev misses too, where `words_from_misses`)."""
    found = []
    for topic in topics:
        pattern = asking_pattern(topic.asks, topic.misses if words_from_misses else "")
        if pattern is not None:
            found.append((topic.titles, pattern))
    return tuple(found)


_PATTERNS = {True: _patterns(SECTIONS, True), False: _patterns(SECTIONS, False)}


def asked_sections(question: str, words_from_misses: bool = True) -> tuple[Titles, ...]:
    """The standard sections of an SEC filing a question's topic lives in, each as the titles its heading may
    carry; none for a question that names no such topic. A topic's words inside a longer topic's phrase belong
    to that one: "market risks" asks for Item 7A, not also for the risk factors its "risks" would name alone."""
    return specific_sections(question, _PATTERNS[words_from_misses])


def asks_for_reasons(filing_sections: tuple[Titles, ...]) -> bool:
    """Whether a question asks why a line changed ("What drove the operating margin change?"): Item 7 gives
    the reasons, the statement only the numbers, so such a question is no statement question."""
    return RESULTS_OF_OPERATIONS in filing_sections


def asks_about_the_cover(question: str) -> bool:
    """Whether a question asks what an SEC filing's cover page states: the securities registered under
    Section 12(b) (their classes, trading symbols, exchanges), the filer's status, its state of incorporation,
    the market value of the shares held by non-affiliates."""
    return _COVER.search(question) is not None


def past_the_head(financial_statement: bool, filing_sections: tuple[Titles, ...], cover: bool) -> bool:
    """Whether what a question asks of an SEC filing sits past the filing's head (its cover and Item 1,
    Business, which open a 10-K): in a financial statement, or only in standard sections that come later
    (risk factors, legal proceedings, the notes). Such a question gains nothing from the head chunk that a
    short question about a document as a whole gets (docqa.store.keyword.index)."""
    if cover:
        return False
    return financial_statement or (bool(filing_sections) and not _BUSINESS_TITLES.intersection(filing_sections))
