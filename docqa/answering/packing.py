"""A document's best paragraphs packed into a token budget: what one document of a collection question (or
of a comparison) shows the model, and what a lookup's sources keep under a CPU's prompt budget.

Cutting each retrieved chunk to a window around its single best passage (docqa.answering.focus) suits a
lookup's few sources, but for one document's share of a collection question it lost the clause more often
than retrieval did: on 100 CUAD contracts the labelled clause was in the document's best two chunks for
0.91 of the contracts holding it, in the windows cut from them for 0.70, and in their best ~500-token
passages packed to the same budget for 0.78 (docs/benchmarks/reading.md). A contract's clause is a
paragraph, and a ~500-token passage holds several: here the paragraphs of the document's best chunks are
scored on their own (BM25's saturation of each question term, weighted by the term's IDF in the
collection), taken best first while they fit, each with the short paragraph before it where that is its
heading; the taken paragraphs of a chunk that stand next to each other make one source, shown in the
document's order with its pages.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from docqa.answering import focus, paragraphs
from docqa.answering.paragraphs import heading_of, paragraph_words, stem
from docqa.core.types import RetrievedChunk
from docqa.store.keyword.passage_bm25 import K1, B
from docqa.store.keyword.passages import split_passages

CONTEXT_WEIGHT = 1.0  # what the best passage adds to each of its paragraphs' scores (bench.collection_evidence)
TITLE_WEIGHT = 1.0  # what the terms of a paragraph's title add (chosen on half A by bench.collection_evidence)
CALIBRATION_PARAGRAPHS = 8  # the best paragraphs counted exactly; the others estimated at their ratio
MIN_PARAGRAPH_TOKENS = 8  # room left below this ends the packing
RankedPassages = Callable[[RetrievedChunk], list[tuple[int, float]]]  # (passage number, score), best first


def stemmed(term_weights: Mapping[str, float]) -> dict[str, float]:
    """The question's terms keyed by their stems (two terms of one stem: the higher weight)."""
    weights: dict[str, float] = {}
    for term, idf in term_weights.items():
        weights[stem(term)] = max(weights.get(stem(term), 0.0), idf)
    return weights


def _score(counts: Mapping[str, int], length: int, weights: Mapping[str, float], average: float) -> float:
    norm = K1 * (1 - B + B * length / max(average, 1.0))
    return sum(idf * counts[t] * (K1 + 1) / (counts[t] + norm) for t, idf in weights.items() if t in counts)


@dataclass(frozen=True)
class Reading:
    """What scoring needs of the chunks' paragraphs whatever the question's weights (their words, lengths,
    passage context and titles' words), kept so that scoring them again with other weights is arithmetic."""

    spans: list[list[tuple[int, int]]]
    counts: list[list[Counter[str]]]
    average: float
    context: list[list[float]]
    titles: list[list[frozenset[str]]]


@dataclass(frozen=True)
class Packable:
    """A document's chunks with their paragraphs scored for the question: what `take` packs into a budget,
    and `need`, the tokens every paragraph holding the question's words would take (with their headings)."""

    chunks: Sequence[RetrievedChunk]
    units: list[tuple[int, int]]  # (chunk rank, paragraph number) holding the question's words, best first
    sizes: dict[tuple[int, int], int]  # each paragraph's tokens
    need: int  # estimated past the paragraphs counted (docqa.answering.shares needs no more)
    reading: Reading = field(compare=False, repr=False)

    @property
    def spans(self) -> list[list[tuple[int, int]]]:
        return self.reading.spans

    def size(self, unit: tuple[int, int], count_tokens: Callable[[str], int]) -> int:
        """The paragraph's tokens, counted once."""
        if unit not in self.sizes:
            rank, n = unit
            self.sizes[unit] = count_tokens(self.chunks[rank].text[slice(*self.spans[rank][n])])
        return self.sizes[unit]

    def estimate(self, unit: tuple[int, int]) -> int:
        """The paragraph's tokens, counted or estimated from its characters at the ratio of those counted."""
        if unit in self.sizes:
            return self.sizes[unit]
        rank, n = unit
        start, end = self.spans[rank][n]
        counted = [(self.sizes[u], self.spans[u[0]][u[1]]) for u in self.sizes]
        tokens = sum(t for t, _ in counted)
        chars = sum(e - s for _, (s, e) in counted)
        return -(-(end - start) * tokens // chars) if tokens and chars else -(-(end - start) // 4)

    def sizes_of(self, rank: int) -> dict[int, int]:
        return {n: size for (r, n), size in self.sizes.items() if r == rank}


def read(chunks: Sequence[RetrievedChunk], passages: RankedPassages | None = None) -> Reading:
    """The chunks' paragraphs read for scoring: their words, the passage context (given the index's passage
    ranking of a chunk), and each paragraph's title's words."""
    spans = [paragraphs.paragraphs(c.text) for c in chunks]
    counts = [
        [Counter(paragraph_words(c.text[s:e])) for s, e in per_chunk]
        for c, per_chunk in zip(chunks, spans, strict=True)
    ]
    lengths = [e - s for per_chunk in spans for s, e in per_chunk]
    average = sum(lengths) / max(len(lengths), 1)
    context = _contexts(chunks, spans, passages) if passages is not None else [[0.0] * len(s) for s in spans]
    titles = [
        [frozenset(paragraph_words(t)) if t else frozenset() for t in paragraphs.titles(c.text, per_chunk)]
        for c, per_chunk in zip(chunks, spans, strict=True)
    ]
    return Reading(spans, counts, average, context, titles)


def packable(
    chunks: Sequence[RetrievedChunk],
    term_weights: Mapping[str, float],
    count_tokens: Callable[[str], int],
    passages: RankedPassages | None = None,
    again: Packable | None = None,
) -> Packable:
    """The chunks' paragraphs scored: BM25 over the question's terms (term_weights: each term's IDF), plus,
    given the index's passage ranking of a chunk, CONTEXT_WEIGHT times its passage's share of the best
    passage's score, so that a clause whose own words are not the question's is still found under its heading
    or beside the sentence that names it; plus TITLE_WEIGHT times the IDF of the question's terms in the
    paragraph's title. `again`: the same chunks scored before, whose reading and counted sizes are reused."""
    reading = again.reading if again is not None else read(chunks, passages)
    spans = reading.spans
    units = _ranked(reading, stemmed(term_weights))
    sizes: dict[tuple[int, int], int] = dict(again.sizes if again is not None else {})
    held = [(rank, k) for rank, n in units for k in sorted({n} | heading_of(spans[rank], n))]
    found = Packable(chunks, units, sizes, 0, reading)
    for unit in held[:CALIBRATION_PARAGRAPHS]:
        found.size(unit, count_tokens)
    return replace(found, need=sum(found.estimate(u) for u in dict.fromkeys(held)))


def _ranked(reading: Reading, weights: Mapping[str, float]) -> list[tuple[int, int]]:
    """(chunk rank, paragraph number) of the paragraphs that score above nothing, best first."""
    scored = []  # (score, chunk rank, paragraph number)
    for rank, spans in enumerate(reading.spans):
        for n, (start, end) in enumerate(spans):
            score = _score(reading.counts[rank][n], end - start, weights, reading.average) + reading.context[rank][n]
            if paragraphs.SECTION_TITLES or score > 0:
                score += TITLE_WEIGHT * sum(idf for term, idf in weights.items() if term in reading.titles[rank][n])
            if score > 0:
                scored.append((score, rank, n))
    scored.sort(key=lambda u: (-u[0], u[1], u[2]))
    return [(rank, n) for _, rank, n in scored]


def take(
    found: Packable,
    budget: int,
    count_tokens: Callable[[str], int],
    per_source: int = 0,
    room: int | None = None,
    widen: bool = False,
    most_sources: int | None = None,
) -> list[RetrievedChunk]:
    """The sources that show the best paragraphs within `budget` tokens of text, best first, a paragraph that
    does not fit skipped for a smaller one after it; empty when no paragraph holds a term of the question (the
    caller then cuts windows instead). The taken paragraphs of a chunk that stand next to each other make one
    source, shown in the document's order with its pages. With `room`, the text and `per_source` tokens a source
    (its tags in the prompt) stay within it too: without that, 43 of 90 prompts of a collection question in a
    2,560-token context overflowed and dropped whole passages to fit. A paragraph is counted only when it may fit
    (its estimate at most twice the room left). With `widen`, what is left of the budget shows the paragraphs
    beside the taken ones (a lookup's prompt, whose leftover no other document takes)."""
    taken, used = _chosen(found, budget, count_tokens, per_source, room, most_sources)
    if widen and taken:
        _widen(found, taken, budget - used if room is None else min(budget, room) - used, count_tokens)
    chunks, spans = found.chunks, found.spans
    return [
        source
        for r in sorted(taken)
        for source in _runs(chunks[r], spans[r], taken[r], budget, count_tokens, found.sizes_of(r))
    ]


def _chosen(
    found: Packable,
    budget: int,
    count_tokens: Callable[[str], int],
    per_source: int,
    room: int | None,
    most_sources: int | None = None,
) -> tuple[dict[int, set[int]], int]:
    """The paragraphs `take` shows (chunk rank -> paragraph numbers), and the tokens of text and tags they use."""
    taken: dict[int, set[int]] = {}
    used = tags = sources = 0  # tokens of text taken; of the sources' tags, where they count (room given)
    for rank, n in found.units:
        text_left = budget - used
        room_left = text_left if room is None else room - used - tags
        if taken and min(text_left, room_left) < MIN_PARAGRAPH_TOKENS:
            break
        have = taken.get(rank, set())
        numbers = ({n} | heading_of(found.spans[rank], n)) - have
        joins = any(k - 1 in have or k + 1 in have for k in numbers)
        if most_sources is not None and not joins and sources >= most_sources:
            continue
        cost = 0 if room is None or joins else per_source
        if taken and sum(found.estimate((rank, k)) for k in numbers) > 2 * min(text_left, room_left - cost):
            continue
        size = sum(found.size((rank, k), count_tokens) for k in numbers)
        if taken and (size > text_left or size + cost > room_left):
            continue
        taken.setdefault(rank, set()).update(numbers)
        used += size
        tags += cost
        sources += not joins
    return taken, used + tags


def _widen(found: Packable, taken: dict[int, set[int]], left: int, count_tokens: Callable[[str], int]) -> None:
    """Add to `taken` the paragraphs just before and after its runs while they fit in `left` tokens, a round at
    a time, the best chunk's first (each joins a run: no new source, no new tags)."""
    added = True
    while added and left >= MIN_PARAGRAPH_TOKENS:
        added = False
        for rank in sorted(taken):
            count = len(found.spans[rank])
            for k in sorted({k + d for k in taken[rank] for d in (-1, 1)} - taken[rank]):
                if 0 <= k < count and (size := found.size((rank, k), count_tokens)) <= left:
                    taken[rank].add(k)
                    left -= size
                    added = True


def pack(
    chunks: Sequence[RetrievedChunk],
    term_weights: Mapping[str, float],
    count_tokens: Callable[[str], int],
    budget: int,
    passages: RankedPassages | None = None,
) -> list[RetrievedChunk]:
    """The best paragraphs of these chunks within `budget` tokens (packable, then take)."""
    return take(packable(chunks, term_weights, count_tokens, passages), budget, count_tokens)


def _contexts(
    chunks: Sequence[RetrievedChunk], spans: list[list[tuple[int, int]]], passages: RankedPassages
) -> list[list[float]]:
    """Per paragraph, CONTEXT_WEIGHT times its passage's score over the best passage's of these chunks."""
    ranked = [passages(c) for c in chunks]
    best = max((score for per_chunk in ranked for _, score in per_chunk), default=0.0)
    out = []
    for chunk, per_chunk, paragraph_spans in zip(chunks, ranked, spans, strict=True):
        score_of = dict(per_chunk)
        bounds = passage_spans(chunk.text)
        row = []
        for start, _ in paragraph_spans:
            owner = next((k for k, (s, e) in enumerate(bounds) if s <= start < e), None)
            share = score_of.get(owner, 0.0) / best if owner is not None and best > 0 else 0.0
            row.append(CONTEXT_WEIGHT * share)
        out.append(row)
    return out


def passage_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of each of the index's passages of the text (split_passages order; an overlong
    paragraph's windows overlap)."""
    found: list[tuple[int, int]] = []
    at = 0
    for passage in split_passages(text):
        start = text.find(passage, at) if passage else at
        start = at if start < 0 else start
        found.append((start, start + len(passage)))
        at = start + 1
    return found


def _runs(
    chunk: RetrievedChunk,
    spans: list[tuple[int, int]],
    numbers: set[int],
    budget: int,
    count_tokens: Callable[[str], int],
    sizes: Mapping[int, int] | None = None,
) -> list[RetrievedChunk]:
    """One source per run of adjacent taken paragraphs; a lone run over the whole budget (the best one,
    taken first whatever its size) is cut to the budget from its start (a run whose paragraphs' counted
    sizes, and a token for each break between them, are within it is not counted again)."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    sources = []
    for run in runs:
        source = focus.cut(chunk, spans[run[0]][0], spans[run[-1]][1])
        if sizes is not None and all(n in sizes for n in run) and sum(sizes[n] for n in run) + len(run) <= budget:
            sources.append(source)
            continue
        if count_tokens(source.text) > budget:
            source = _head(source, budget, count_tokens)
        sources.append(source)
    return sources


def _head(source: RetrievedChunk, budget: int, count_tokens: Callable[[str], int]) -> RetrievedChunk:
    lo, hi = 0, len(source.text)
    while hi - lo > max(16, hi // 64):
        mid = (lo + hi) // 2
        if count_tokens(source.text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid
    return focus.cut(source, 0, lo)
