"""The Chinese listed companies' filings profile: prospectuses (招股说明书) and periodic reports (年度报告, ...).

What it knows, and where from: a filing's identity from its cover as the CSRC's disclosure rules lay it out
(covers); the standard sections of a prospectus and an annual report (sections, from the CSRC's content and
format standards); the company-profile sections that state who controls a company and where it lists. The
filers a question names are matched as the SEC profile matches them (docqa.profiles.sec.filers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docqa.core.identity import ChunksSaying, DocumentIdentity
from docqa.core.query import FavouredTitles
from docqa.profiles.csrc.covers import COVER_CHARS, read_csrc_identity
from docqa.profiles.csrc.sections import asked_csrc_sections, asked_profile_sections
from docqa.profiles.protocol import Hints
from docqa.profiles.sec.catalog import filing_catalog
from docqa.profiles.sec.filers import filing_hints

NAME = "csrc"


@dataclass(frozen=True)
class CsrcWeights:
    """What the favoured titles weigh (each a share of the title's IDF, docqa.store.keyword.passage_bm25)."""

    profile_section: float = 8.0  # a company-profile section, for a fact it states (as a statement's title)
    section: float = 1.0  # a standard section holding the question's topic (any document: Chinese text)


class CsrcProfile:
    """Chinese listed companies' filings (docqa.profiles.csrc)."""

    name = NAME
    version = 1
    description = (
        "Chinese listed companies' prospectuses and periodic reports: covers (stock code, short name, year) and "
        "the CSRC's standard sections"
    )
    head_chars = COVER_CHARS

    def __init__(self, weights: CsrcWeights = CsrcWeights()) -> None:
        self.weights = weights

    def identity(self, file_name: str, head: str, chunks_saying: ChunksSaying) -> DocumentIdentity | None:
        return read_csrc_identity(head)

    def catalog(self, file_name: str, head: str, texts: Sequence[str]) -> dict[str, Any] | None:
        identity = read_csrc_identity(head)
        return filing_catalog(file_name, identity, head, texts) if identity is not None else None

    def understand(self, question: str, identities: Mapping[int, DocumentIdentity] | None) -> Hints:
        named, narrowed = filing_hints(question, identities)
        return Hints(
            named=named,
            narrowed=narrowed,
            favoured=(
                *(
                    FavouredTitles(t, self.weights.profile_section, marks_page=True)
                    for t in asked_profile_sections(question)
                ),
                *(FavouredTitles(t, self.weights.section) for t in asked_csrc_sections(question)),
            ),
        )

    def drafting_words(self, question: str) -> tuple[str, ...]:
        return ()
