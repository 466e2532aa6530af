"""FTS5's BM25 for the passages of one document, without FTS5 counting every term across the index.

FTS5's `bm25()` works out each query term's IDF when a query starts, by reading the term's whole
posting list. Inside one document that is nearly all of the cost: at 100,000 chunks a second-pass
query over one document's passages took 20-35 ms with `bm25()` and 2-5 ms without it. Here FTS5 only
finds the document's matching passages and marks the matched tokens (`highlight()`, which reads no
posting list); the term frequencies are counted from those marks, the lengths read from FTS5's own
tables (`_docsize`, and the averages record in `_data`), and the document frequencies come from
docqa.term_stats, cached. The formula is fts5_aux.c's, in its order of operations, so the scores
equal `bm25()`'s (a test compares them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from docqa import lexical
from docqa.term_stats import TermStats, index_totals, varints

K1 = 1.2  # fts5_aux.c's constants
B = 0.75
_OPEN, _CLOSE = "\x01", "\x02"  # highlight()'s marks; lexical.index_text keeps control characters out
# A heading: a short title after a section number ("12.3 Governing Law.", "Section 2. Retention of
# Agent;", "4.1 Formation of the Channel   (a)"), or a line in capitals ("TERMS AND CONDITIONS").
_NUMBERED_HEADING = re.compile(
    r"[ \t]*(?:(?:section|article|clause)[ \t]+)?(?:\d+(?:\.\d+)*|[ivxlc]+)\.?[ \t]+"
    r"([^.:;]{3,80}?)(?=[.:;]|[ \t]{3}|$)",
    re.I,
)
_CAPS_HEADING = re.compile(r"[ \t]*(\x01?[A-Z][A-Z0-9 ,&/'()\x01\x02-]{3,80})[ \t]*$")
_HEADING_WORDS = 10
_MARKED = re.compile("\x01([^\x02]*)\x02")


def heading_spans(marked: str) -> list[str]:
    """The marked spans (highlight()'s) of a passage that sit in its headings, lower-cased. Only
    lines holding a mark are looked at: at 100k chunks, scanning every line cost ~10 ms a question."""
    found = []
    for line in marked.split("\n"):
        if _OPEN not in line:
            continue
        match = _NUMBERED_HEADING.match(line) or _CAPS_HEADING.match(line)
        if match is not None and len(match.group(1).split()) <= _HEADING_WORDS:
            found += [span.lower() for span in _MARKED.findall(match.group(1))]
    return found


def document_passages(
    session: Session,
    stats: TermStats,
    terms: list[str],
    rows: tuple[int, int],
    document_id: int,
    weights: tuple[float, float],
    passages_per_chunk: int,
    heading_weight: float = 0.0,
) -> list[tuple[int, float]]:
    """(passage rowid, BM25 score; higher is better) of every passage of the document in the rowid
    range `rows` that matches any of `terms`, as FTS5's bm25(passage_fts, *weights) would score it,
    best first (ties in rowid order). heading_weight: each term found in one of the passage's
    headings (body only) adds this share of its IDF, as a heading field would in BM25F."""
    match = lexical.match_expression(terms)
    if match is None:
        return []
    columns = [c for c, weight in enumerate(weights) if weight]
    marked = "".join(f", highlight(passage_fts, {c}, char(1), char(2))" for c in columns)
    found = session.execute(
        text(
            f"SELECT p.rowid{marked} FROM passage_fts p JOIN chunks c ON c.id = p.rowid / {passages_per_chunk} "
            "WHERE passage_fts MATCH :q AND p.rowid >= :lo AND p.rowid < :hi AND c.document_id = :did "
            "ORDER BY p.rowid"
        ),
        {"q": match, "lo": rows[0], "hi": rows[1], "did": document_id},
    ).all()
    if not found:
        return []
    sizes = {
        int(rowid): sum(varints(bytes(size)))
        for rowid, size in session.execute(
            text("SELECT id, sz FROM passage_fts_docsize WHERE id >= :lo AND id < :hi"),
            {"lo": rows[0], "hi": rows[1]},
        )
    }
    totals = index_totals(session)  # this session's own view (stats.totals may be another thread's)
    phrases = [tuple(s) for s in stats.stems(terms)]
    idf = [
        _idf(totals.rows, stats.phrase_frequency(session, term, phrase))
        for term, phrase in zip(terms, phrases, strict=True)
    ]
    counter = _PhraseCounter(phrases)
    # Every marked span of every row, stemmed in one call: (row, weight, span)
    spans = [
        (n, weights[column], piece.split(_CLOSE, 1)[0].lower())
        for n, (_, *texts) in enumerate(found)
        for column, marked_text in zip(columns, texts, strict=True)
        for piece in (marked_text or "").split(_OPEN)[1:]
    ]
    frequencies = [[0.0] * len(phrases) for _ in found]
    for (n, weight, _), stems in zip(spans, stats.stems([span for _, _, span in spans]), strict=True):
        counter.add(frequencies[n], stems, weight)
    average_length = totals.average_length or 1.0  # 0 only for an empty index, which matches nothing
    in_headings = [[0.0] * len(phrases) for _ in found]
    if heading_weight and 1 in columns:
        # The body's marked spans that sit in headings, stemmed in one call like those above: (row, span)
        body = 1 + columns.index(1)  # its place in a found row, after the rowid
        titled = [(n, span) for n, row in enumerate(found) for span in heading_spans(row[body] or "")]
        for (n, _), stems in zip(titled, stats.stems([span for _, span in titled]), strict=True):
            counter.add(in_headings[n], stems, 1.0)
    scored = []
    for (rowid, *_), frequency, heading in zip(found, frequencies, in_headings, strict=True):
        length = float(sizes.get(int(rowid), 0))
        score = 0.0
        for n in range(len(phrases)):
            score += idf[n] * (
                (frequency[n] * (K1 + 1.0)) / (frequency[n] + K1 * (1 - B + B * length / average_length))
            )
        score += heading_weight * sum(idf[n] for n in range(len(phrases)) if heading[n])
        scored.append((int(rowid), score))
    scored.sort(key=lambda item: -item[1])
    return scored


def _idf(rows: int, hits: int) -> float:
    """fts5_aux.c: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6 for terms in half the rows or more."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


class _PhraseCounter:
    """Counts the query's phrases (each term's stems) in the marked spans of a highlighted text. FTS5
    joins overlapping instances into one span, so a span's stems are searched for each phrase as a run."""

    def __init__(self, phrases: Sequence[tuple[str, ...]]) -> None:
        self._single: dict[str, list[int]] = {}
        for n, phrase in enumerate(phrases):
            if len(phrase) == 1:
                self._single.setdefault(phrase[0], []).append(n)
        self._longer = [(n, phrase) for n, phrase in enumerate(phrases) if len(phrase) > 1]

    def add(self, frequency: list[float], stems: Sequence[str], weight: float) -> None:
        for stem in stems:
            for n in self._single.get(stem, ()):
                frequency[n] += weight
        for n, phrase in self._longer:
            width = len(phrase)
            runs = sum(1 for i in range(len(stems) - width + 1) if tuple(stems[i : i + width]) == phrase)
            frequency[n] += weight * runs
