"""A question as retrieval understands it: built once (docqa.retrieval.understanding, with the document
profiles' help: docqa.profiles) and handed down to the store's index primitives and to the prompt windows, so
that no layer below reads the question's text again.

Plain, generic data: the terms the index is searched by, the clauses a document's title is matched in, the
documents the question names, the headings' titles that hold what it asks (each with its weight, and the
profile whose documents they apply to), and how a document's head is treated. What a filing or a contract is
lives in the profiles; nothing here knows of one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Titles = tuple[str, ...]  # the titles, lowercased, that one section's heading may carry


@dataclass(frozen=True)
class FavouredTitles:
    """Headings that hold what a question asks: a passage under one of `titles` gains `weight` times the
    title's IDF in the second pass (docqa.store.keyword.passage_bm25)."""

    titles: Titles
    weight: float
    # the profile whose documents these titles apply to (a filing's standard item only in a filing of that
    # profile: a contract's "Competition" clause is not one); None: any document
    only_in: str | None = None
    # a page under one of these headings is the page the answer sits on (a statement's table): the prompt
    # window turns on it (docqa.answering.windows)
    marks_page: bool = False


HeadRule = Literal["auto", "first", "never"]


@dataclass(frozen=True)
class Query:
    """What a question asks, in the index's terms. Every field but `terms` may be left empty: a text that is
    not a question (an answer whose best page is wanted) is a Query of its terms alone."""

    terms: tuple[str, ...]  # lowercased words (CJK as bigrams), stopwords and repeats left out, in order
    clauses: tuple[tuple[str, ...], ...] = ()  # the same words by clause: where runs naming a document are sought
    # the documents it names (a company's filings for the period asked): the search picks among them; empty:
    # it names none here
    named: frozenset[int] = frozenset()
    # where it names no document but what would narrow to some (a period): those documents, which replace a
    # first-pass pick of the same profile outside them; empty otherwise
    narrowed: frozenset[int] = frozenset()
    favoured: tuple[FavouredTitles, ...] = ()
    # the document's head chunk: "auto", the head rule for a question that says little beyond naming its
    # document (docqa.store.keyword.index); "first", what it asks is on the head (a filing's cover); "never",
    # what it asks sits past the head. `head_in`: the profile whose documents "first" and "never" apply to
    head: HeadRule = "auto"
    head_in: str | None = None

    def titles_in(self, profile: str | None) -> tuple[FavouredTitles, ...]:
        """The favoured titles that apply to a document of `profile` (None: a document no profile read)."""
        return tuple(f for f in self.favoured if f.only_in is None or f.only_in == profile)

    def head_rule(self, profile: str | None) -> HeadRule:
        """How the head chunk of a document of `profile` is treated for this question."""
        return self.head if self.head_in is None or self.head_in == profile else "auto"
