"""The keyword search's ranking constants, in one object.

Each was chosen by measurement; how, and what the other values gave, is in docs/retrieval.md ("Ranking
constants"), which also says which were chosen by company-grouped cross-validation
(`python -m bench.crossval`). The weights of the titles a document profile favours are the profile's own
(docqa.profiles; the same bench cross-validates them). A store holds one RankingConstants (Store.ranking), so
a benchmark can try others on the same index without editing code.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class RankingConstants:
    """What the two passes of docqa.store.keyword.index.search weigh, and when they step in."""

    title_weight: float = 4.0
    """BM25 weight of a passage's title column (file name and document head) against its body's 1.0."""
    other_passages_share: float = 0.3
    """Second pass: a chunk scores its best passage plus this share of its other matching passages."""
    twin_share: float = 0.9
    """A document within this share of the top document's first-pass score is a twin: its best chunk
    takes second place."""
    head_question_terms: int = 4
    """A question with at most this many terms besides the words naming its document gets the document's
    head chunk at head_slot."""
    head_slot: int = 2
    """Where (0-based) the head chunk goes for such a question."""
    head_first_terms: int = 1
    """With at most this many terms left, the head chunk goes first."""
    heading_weight: float = 1.0
    """Second pass: a question term in one of a passage's headings adds this share of its IDF."""
    naming_run: int = 2
    """The words that name a document are the question's runs of at least this many consecutive words
    that are all in its title column."""
    max_filings_scored: int = 8
    """A question naming more documents than this (a company's filings for its period) has the first pass's
    order decide among the rest."""
    title_ratio: float = 2.0
    """A document whose title names the question better replaces the first pass's document when its
    naming score exceeds title_ratio x the first's + title_margin (docqa.store.keyword.titles)."""
    title_margin: float = 8.0
    """See title_ratio."""
    cjk_bigram_share: float = 0.5
    """A Chinese title bigram counts this share of a word in the naming score."""

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


DEFAULT_RANKING = RankingConstants()
