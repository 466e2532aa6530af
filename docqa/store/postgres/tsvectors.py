"""Postgres text-search values written by docqa: a passage's own stems as a tsvector (lexemes verbatim, with
their positions) and a question's phrases as a tsquery, so that Postgres never tokenises or stems anything
(docqa.store.postgres.keyword_tables says why); and a phrase's count from its stems' positions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from docqa.store.keyword import lexical
from docqa.store.keyword.passage_stems import Stemmer

# Postgres keeps at most 256 positions of one lexeme in a tsvector and positions up to 16,383; a
# passage is about 500 tokens, so only a passage repeating one word hundreds of times loses counts.
MAX_POSITIONS = 255
MAX_POSITION = 16_383


def stems_of(stemmer: Stemmer, indexed: str) -> list[str]:
    """The stems of an indexed text (CJK already as bigrams), in order, as FTS5 would index them."""
    return [stem for word_stems in stemmer.stems(lexical.words_of(indexed)) for stem in word_stems]


def tsvector_literal(stems: Sequence[str]) -> str:
    """A tsvector's text form holding the stems verbatim, each with its positions (1-based)."""
    positions: dict[str, list[int]] = defaultdict(list)
    for n, stem in enumerate(stems, start=1):
        kept = positions[stem]
        if len(kept) < MAX_POSITIONS:
            kept.append(min(n, MAX_POSITION))
    return " ".join(f"{_quoted(stem)}:{','.join(map(str, sorted(set(ns))))}" for stem, ns in positions.items())


def tsquery_literal(phrases: Sequence[Sequence[str]]) -> str:
    """The phrases OR-ed; a phrase of several stems (a term the tokenizer splits) as adjacent lexemes."""
    return " | ".join("(" + " <-> ".join(_quoted(stem) for stem in phrase) + ")" for phrase in phrases if phrase)


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def phrase_count(positions: Sequence[Sequence[int]]) -> int:
    """How often the stems occur adjacent and in order, from each stem's positions."""
    if not positions or any(not p for p in positions):
        return 0
    later = [set(p) for p in positions[1:]]
    return sum(all(start + k + 1 in nexts for k, nexts in enumerate(later)) for start in positions[0])
