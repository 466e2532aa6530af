"""A document's best paragraphs packed into a token budget: what one document of a collection question (or
of a comparison) shows the model.

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

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from docqa.answering import focus
from docqa.core.types import RetrievedChunk
from docqa.store.keyword import lexical
from docqa.store.keyword.passage_bm25 import K1, B
from docqa.store.keyword.passages import split_passages

PARAGRAPH_CHARS = 1500  # a "paragraph" longer than this (a page without blank lines) is cut at its line breaks
HEADING_CHARS = 200  # a paragraph this short, just before a taken one, is taken with it (its heading)
CONTEXT_WEIGHT = 1.0  # what the best passage adds to each of its paragraphs' scores (bench.collection_evidence)
TITLE_WEIGHT = 1.0  # what the terms of a paragraph's title add (chosen on half A by bench.collection_evidence)
# A clause's own title at its start: a number ("7.1", "12.", "(b)", "Section 4") then a few words ending in a
# period or colon ("7.1 Term."), or words in capitals ending so ("TERM AND TERMINATION.").
_NUMBERED_TITLE = re.compile(
    r"\s*(?:(?:section|article|clause)\s+)?(?:\d+(?:\.\d+)*|[ivxlc]+|\(?[a-z\d]{1,3}\))[.)]?\s+([^.:\n]{2,80}?)[.:]",
    re.IGNORECASE,
)
_CAPITALS_TITLE = re.compile(r"\s*([A-Z][A-Z ,;&/'-]{2,80})[.:]")
# A heading line: an optional number ("42.0", "9.", "Article 7", "(b)") then at most 80 characters of words.
_HEADING_LINE = re.compile(
    r"(?:(?:section|article|clause)\s+)?(?:\d+(?:\.\d+)*|[ivxlc]+|\(?[a-z\d]{1,3}\))?[.)]?\s*([^.;:\n]{3,80})[.:]?",
    re.IGNORECASE,
)
CALIBRATION_PARAGRAPHS = 8  # the best paragraphs counted exactly; the others estimated at their ratio
MIN_PARAGRAPH_TOKENS = 8  # room left below this ends the packing
SECTION_TITLES = True  # a paragraph without its own title takes its section's heading line's
RankedPassages = Callable[[RetrievedChunk], list[tuple[int, float]]]  # (passage number, score), best first
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_SUFFIX = re.compile(r"(?:ations?|ities|ity|ments?|ings?|ions?|ive|ed|es|s)$")


def paragraphs(text: str) -> list[tuple[int, int]]:
    """[start, end) of the text's paragraphs: split at blank lines, an overlong one at its line breaks."""
    spans: list[tuple[int, int]] = []
    start = 0
    for gap in [*_BLANK_LINE.finditer(text), None]:
        end = gap.start() if gap else len(text)
        if text[start:end].strip():
            spans += _lines_within(text, start, end)
        start = gap.end() if gap else end
    return spans


def _lines_within(text: str, start: int, end: int) -> list[tuple[int, int]]:
    if end - start <= PARAGRAPH_CHARS:
        return [(start, end)]
    pieces = []
    while end - start > PARAGRAPH_CHARS:
        cut = text.rfind("\n", start + PARAGRAPH_CHARS // 2, start + PARAGRAPH_CHARS)
        cut = cut if cut > start else start + PARAGRAPH_CHARS
        pieces.append((start, cut))
        start = cut
    return [*pieces, (start, end)]


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A word without its commonest English endings, so that 'compete' meets 'competing', 'assignment'
    meets 'assign' (each side stemmed alike; other scripts unchanged). Kept per word: a collection question
    stems some 600,000 words of 100 contracts' paragraphs, a few thousand of them distinct."""
    return _SUFFIX.sub("", word) if len(word) > 5 and word.isascii() else word


def paragraph_words(text: str) -> list[str]:
    """The text's words as paragraphs are scored: lower-cased and stemmed, CJK as the index's bigrams."""
    return [stem(word.lower()) for word in lexical.words_of(lexical.index_text(text))]


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
    spans = [paragraphs(c.text) for c in chunks]
    counts = [
        [Counter(paragraph_words(c.text[s:e])) for s, e in per_chunk]
        for c, per_chunk in zip(chunks, spans, strict=True)
    ]
    lengths = [e - s for per_chunk in spans for s, e in per_chunk]
    average = sum(lengths) / max(len(lengths), 1)
    context = _contexts(chunks, spans, passages) if passages is not None else [[0.0] * len(s) for s in spans]
    titles = [
        [frozenset(paragraph_words(t)) if t else frozenset() for t in _titles(c.text, per_chunk)]
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
    weights = stemmed(term_weights)
    reading = again.reading if again is not None else read(chunks, passages)
    spans = reading.spans
    scored = []  # (score, chunk rank, paragraph number)
    for rank in range(len(chunks)):
        for n, (start, end) in enumerate(spans[rank]):
            score = _score(reading.counts[rank][n], end - start, weights, reading.average) + reading.context[rank][n]
            if SECTION_TITLES or score > 0:
                score += TITLE_WEIGHT * sum(idf for term, idf in weights.items() if term in reading.titles[rank][n])
            if score > 0:
                scored.append((score, rank, n))
    scored.sort(key=lambda u: (-u[0], u[1], u[2]))
    units = [(rank, n) for _, rank, n in scored]
    sizes: dict[tuple[int, int], int] = dict(again.sizes if again is not None else {})
    held = [(rank, k) for rank, n in units for k in sorted({n} | _heading_of(spans[rank], n))]
    found = Packable(chunks, units, sizes, 0, reading)
    for unit in held[:CALIBRATION_PARAGRAPHS]:
        found.size(unit, count_tokens)
    return replace(found, need=sum(found.estimate(u) for u in dict.fromkeys(held)))


def take(
    found: Packable, budget: int, count_tokens: Callable[[str], int], per_source: int = 0, room: int | None = None
) -> list[RetrievedChunk]:
    """The sources that show the best paragraphs within `budget` tokens of text, best first, a paragraph that
    does not fit skipped for a smaller one after it; empty when no paragraph holds a term of the question (the
    caller then cuts windows instead). The taken paragraphs of a chunk that stand next to each other make one
    source, shown in the document's order with its pages. With `room`, the text and `per_source` tokens a source
    (its tags in the prompt) stay within it too: without that, 43 of 90 prompts of a collection question in a
    2,560-token context overflowed and dropped whole passages to fit. A paragraph is counted only when it may fit
    (its estimate at most twice the room left)."""
    taken: dict[int, set[int]] = {}
    used = tags = 0  # tokens of text taken; of the sources' tags, where they count (room given)
    for rank, n in found.units:
        text_left = budget - used
        room_left = text_left if room is None else room - used - tags
        if taken and min(text_left, room_left) < MIN_PARAGRAPH_TOKENS:
            break
        have = taken.get(rank, set())
        numbers = ({n} | _heading_of(found.spans[rank], n)) - have
        joins = any(k - 1 in have or k + 1 in have for k in numbers)
        cost = 0 if room is None or joins else per_source
        if taken and sum(found.estimate((rank, k)) for k in numbers) > 2 * min(text_left, room_left - cost):
            continue
        size = sum(found.size((rank, k), count_tokens) for k in numbers)
        if taken and (size > text_left or size + cost > room_left):
            continue
        taken.setdefault(rank, set()).update(numbers)
        used += size
        tags += cost
    chunks, spans = found.chunks, found.spans
    return [
        source
        for r in sorted(taken)
        for source in _runs(chunks[r], spans[r], taken[r], budget, count_tokens, found.sizes_of(r))
    ]


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


def _title(text: str, spans: list[tuple[int, int]], n: int) -> str:
    """The title a paragraph stands under: its own leading one ("7.1 Term. The term of ...", "TERMINATION.
    Either party ..."), else the short paragraph before it (a heading line)."""
    start, end = spans[n]
    head = min(end, start + 120)
    own = _NUMBERED_TITLE.match(text, start, head) or _CAPITALS_TITLE.match(text, start, head)
    if own:
        return own.group(1)
    if n > 0 and spans[n - 1][1] - spans[n - 1][0] <= HEADING_CHARS:
        return text[slice(*spans[n - 1])]
    return ""


def _titles(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """Each paragraph's title (`_title`), and with SECTION_TITLES, for a paragraph without its own, the
    heading line its section stands under ("42.0 NON-COMPETITION" over "42.1 ... shall not enter into an
    agreement ..."), up to the next heading line: a clause's body need not repeat its heading's words."""
    titles, section = [], ""
    for n in range(len(spans)):
        line = text[slice(*spans[n])]
        heading = SECTION_TITLES and _is_heading_line(line)
        if heading:
            section = line
        titles.append(_title(text, spans, n) or ("" if heading else section))
    return titles


def _is_heading_line(paragraph: str) -> bool:
    """A paragraph that is only a heading: a few words, no sentence ("9. NON-COMPETITION.", "Article 7 Term",
    "NOTICES"), in capitals or with every major word capitalised."""
    words = _HEADING_LINE.fullmatch(paragraph.strip())
    if not words:
        return False
    body = words.group(1)
    letters = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", body) if len(w) > 3]
    return bool(letters) and (body.isupper() or all(w[0].isupper() for w in letters))


def _heading_of(spans: list[tuple[int, int]], n: int) -> set[int]:
    if n > 0 and spans[n - 1][1] - spans[n - 1][0] <= HEADING_CHARS:
        return {n - 1}
    return set()


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
