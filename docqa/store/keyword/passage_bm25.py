"""FTS5's BM25 for the passages of one document, without FTS5 counting every term across the index.

FTS5's `bm25()` works out each query term's IDF when a query starts, by reading the term's whole
posting list. Inside one document that is nearly all of the cost: at 100,000 chunks a second-pass
query over one document's passages took 20-35 ms with `bm25()`. Here the term frequencies are
counted in the passages' stored stems (docqa.store.keyword.passage_stems: no FTS5 query at all, and no passage
tokenised again), the lengths read from FTS5's own tables (`_docsize`, and the averages record in
`_data`), and the document frequencies come from docqa.store.keyword.term_stats, cached. The formula is
fts5_aux.c's, in its order of operations, so the scores equal `bm25()`'s (a test compares them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sqlalchemy.orm import Session

from docqa.store.keyword import lexical, passage_stems
from docqa.store.keyword.term_stats import TermStats

K1 = 1.2  # fts5_aux.c's constants
B = 0.75


@dataclass(frozen=True)
class HeadingBonus:
    """What a passage's headings add to its score (body only). `weight`: each term found in one of the
    passage's headings adds this share of its IDF, as a heading field would in BM25F; `titled`: where a
    heading is one of the titles the question needs (each entry: a statement's or a section's possible
    titles, docqa.profiles.sec.statements and .sections, with its weight), that weight times the
    title's IDF."""

    weight: float = 0.0
    titled: tuple[tuple[tuple[str, ...], float], ...] = ()


NO_HEADINGS = HeadingBonus()


def document_passages(
    session: Session,
    stats: TermStats,
    terms: list[str],
    rows: tuple[int, int],
    document_id: int,
    weights: tuple[float, float],
    passages_per_chunk: int,
    headings: HeadingBonus = NO_HEADINGS,
) -> list[tuple[int, float]]:
    """(passage rowid, BM25 score; higher is better) of every passage of the document in the rowid
    range `rows` that matches any of `terms` (in its title or body, as FTS5's MATCH would), as FTS5's
    bm25(passage_fts, *weights) would score it, best first (ties in rowid order), plus what its headings
    add (HeadingBonus)."""
    stems = stats.stems(terms)
    if not any(stems):
        return []
    phrases = [[passage_stems.stem_id(stem) for stem in term_stems] for term_stems in stems]
    # Every passage of a document has the same title: its stems are counted once.
    tables = stats.tables
    title = tables.title(session, rows[0])
    in_title = passage_stems.counts([passage_stems.encode(stats.stemmer.ids(title))], phrases)[:, 0]
    found = tables.stored_stems(session, rows, document_id)
    in_body = passage_stems.counts([body for _, body, _ in found], phrases)  # (phrase, passage)
    matching = list(range(len(found))) if in_title.any() else np.flatnonzero(in_body.any(axis=0)).tolist()
    if not matching:
        return []
    sizes = tables.lengths(session, rows)
    totals = tables.totals(session)  # this session's own view (stats.totals may be another thread's)
    idf = np.array(
        [
            term_idf(totals.rows, stats.phrase_frequency(session, term, tuple(term_stems)))
            for term, term_stems in zip(terms, stems, strict=True)
        ]
    )[:, None]
    rowids = [int(found[p][0]) for p in matching]
    lengths = np.array([float(sizes.get(rowid, 0)) for rowid in rowids])
    average_length = totals.average_length or 1.0  # 0 only for an empty index, which matches nothing
    # fts5_aux.c's formula for every (term, passage) at once, summed over the terms in their order
    frequency = weights[0] * in_title[:, None].astype(float) + weights[1] * in_body[:, matching].astype(float)
    scores = (idf * ((frequency * (K1 + 1.0)) / (frequency + K1 * (1 - B + B * lengths / average_length)))).sum(axis=0)
    titled = any(weight for _, weight in headings.titled)
    if (headings.weight or titled) and weights[1]:
        heading_stems = [found[p][2] for p in matching]
        if headings.weight:
            in_headings = passage_stems.counts(heading_stems, phrases) > 0
            scores = scores + headings.weight * (idf * in_headings).sum(axis=0)
        if titled:
            scores = scores + _titles_in_headings(session, stats, totals.rows, headings, heading_stems)
    scored = sorted(zip(rowids, scores.tolist(), strict=True), key=lambda item: -item[1])
    return scored


def _titles_in_headings(
    session: Session, stats: TermStats, rows: int, headings: HeadingBonus, heading_stems: list[bytes]
) -> np.ndarray:
    """Per passage, the weighted IDF of the asked titles among its headings (the best title of each
    statement or section asked, times its weight, summed over them)."""
    total = np.zeros(len(heading_stems))
    for titles, title_weight in headings.titled:
        if not title_weight:
            continue
        best = np.zeros(len(heading_stems))
        for title in titles:
            words = _title_words(title)
            stems = stats.stems(words)
            ids = [passage_stems.stem_id(stem) for word_stems in stems for stem in word_stems]
            present = passage_stems.counts(heading_stems, [ids])[0] > 0
            weight = sum(
                term_idf(rows, stats.phrase_frequency(session, word, tuple(word_stems)))
                for word, word_stems in zip(words, stems, strict=True)
            )
            best = np.maximum(best, present * weight)
        total += title_weight * best
    return total


def _title_words(title: str) -> list[str]:
    """A title's words as the headings' stems hold them. A Chinese title is one phrase of the bigrams its
    headings were indexed as (lexical.index_text): one term, weighed by the IDF of the whole phrase, as an
    English title's word is, not by the sum over its bigrams (five for a six-character title)."""
    if any(lexical.is_cjk(ch) for ch in title):
        return [" ".join(lexical.index_text(title).split())]
    return title.split()


def term_idf(rows: int, hits: int) -> float:
    """fts5_aux.c: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6 for terms in half the rows or more. A count
    read after the total (a document committed in between, or a cached count) can exceed it: floored too,
    where log() of a ratio <= 0 would raise."""
    ratio = (rows - hits + 0.5) / (hits + 0.5)
    return math.log(ratio) if ratio > 1.0 else 1e-6
