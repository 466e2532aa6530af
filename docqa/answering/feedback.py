"""Words the collection's own clauses are drafted in, learnt from the question's first reading of every document.

A question asked of a whole collection is asked of many documents of one kind, and what answers it is drafted
alike across them: "When does each contract expire?" is answered in contract after contract by "the term of
this Agreement shall commence on the Effective Date and continue for a period of three years", words the
question does not hold. Each document's best paragraph for the question is, across the collection, mostly the
clause asked about; the words that recur in those paragraphs far more often than in the documents' other
paragraphs are the clause's own, and weigh in a second scoring of every document's paragraphs (pseudo-relevance
feedback, as in Rocchio's and RM3's query expansion, here across documents rather than over one ranking). A
document whose clause is written without the question's words is then found by the words its peers use.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from docqa.answering.packing import Packable, stemmed
from docqa.store.keyword import lexical

MIN_DOCUMENTS = 8  # fewer first readings than this say too little about the collection's drafting


@dataclass(frozen=True)
class FeedbackSettings:
    """How the collection's first readings widen the question (chosen on half A of bench.collection_evidence)."""

    top: int = 1  # each document's best paragraphs that are read as its clause
    share: float = 0.2  # a word must be in at least this share of those paragraphs
    lift: float = 3.0  # ... and this many times as frequent there as in the documents' other paragraphs
    weight: float = 0.5  # what a word so found weighs, times the log of its lift
    most: int = 12  # at most this many words


FEEDBACK = FeedbackSettings()


def expansion(
    found: Sequence[Packable | None], weights: Mapping[str, float], settings: FeedbackSettings
) -> dict[str, float]:
    """The words, stemmed as packing scores them, that the documents' best paragraphs share beyond chance,
    with their weights; empty where too few documents hold the question's words to learn from."""
    readings = [f for f in found if f is not None and f.units]
    if len(readings) < MIN_DOCUMENTS:
        return {}
    best: Counter[str] = Counter()
    rest: Counter[str] = Counter()
    best_count = rest_count = 0
    for f in readings:
        top = set(f.units[: settings.top])
        for rank, per_chunk in enumerate(f.reading.counts):  # each paragraph's words, as packing read them
            for n, counts in enumerate(per_chunk):
                words = counts.keys()
                if (rank, n) in top:
                    best.update(words)
                    best_count += 1
                else:
                    rest.update(words)
                    rest_count += 1
    return _chosen(best, best_count, rest, max(rest_count, 1), stemmed(weights), settings)


def _chosen(
    best: Counter[str],
    best_count: int,
    rest: Counter[str],
    rest_count: int,
    weights: Mapping[str, float],
    settings: FeedbackSettings,
) -> dict[str, float]:
    candidates = []
    for word, count in best.items():
        share = count / best_count
        if word in weights or share < settings.share or not _is_word(word):
            continue
        lift = share / ((rest[word] + 1) / (rest_count + 1))
        if lift >= settings.lift:
            candidates.append((share * math.log(lift), word, lift))
    candidates.sort(reverse=True)
    return {word: settings.weight * math.log(lift) for _, word, lift in candidates[: settings.most]}


def _is_word(word: str) -> bool:
    """A word that can name a clause: not a number, not one the index's queries leave out ("and", "this")."""
    return len(word) > 2 and not word.isdigit() and not lexical.is_stopword(word)


def widened(weights: Mapping[str, float], extra: Mapping[str, float]) -> dict[str, float]:
    """The question's weights with the learnt words added (a question's own word keeps its weight)."""
    return {**extra, **weights}
