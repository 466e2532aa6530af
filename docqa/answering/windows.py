"""Prompt windows: a retrieved chunk of a long document moved by a page when the page that answers sits
at its edge.

A chunk is cut where the chunker's token budget ran out, not where the answer sits: the page holding the
number can be the chunk's last, with the table's rows going on over the next page, in the next chunk. Here
each multi-page source is rebuilt from whole pages: the chunk's own pages, and where its best page for the
question is its first or last, the page beyond that edge (from the chunk before or after it), in place of
the page at the far end when the token cap (the chunk cap, 4,096 by default) needs the room. The best page
is the one holding the chunk's passage that the keyword search scores best (statement titles and headings
included), else the page where the question's terms weigh most. Windows of one document never share a page
(a later source whose pages an earlier window took keeps the rest, or is left out); text documents (one
"page") and one-page chunks are kept as they are.

Why by one page only: centring a whole 4k-token window on the best page lost financebench_dev evidence that
the chunk held at its other end (BM25's best passage is not the evidence page for about half the questions):
page recall@3 of the question's own filing fell from 0.809 to 0.765, all filings 0.721 to 0.706 (with the
search as it was then; `python -m bench.prompt_windows`). Moved by one page, it is the chunks' own (now 0.838
and 0.750), and the page the window turns on is an evidence page for 0.62 / 0.59 of the questions, where a
chunk's first page is for 0.13 / 0.09 (bench/results/prompt_windows_financebench.json).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

from docqa.answering.citing import page_segments
from docqa.core.query import Query
from docqa.core.types import RetrievedChunk
from docqa.store.keyword import lexical
from docqa.store.keyword.passage_stems import heading_texts
from docqa.store.keyword.passages import split_passages

Neighbours = Callable[[RetrievedChunk], tuple[RetrievedChunk | None, RetrievedChunk | None]]
BestPassage = Callable[[Query, RetrievedChunk], int | None]  # the search's best passage of a chunk, in split order


def _words(text: str) -> set[str]:
    return {word.lower().removesuffix("s") for word in lexical.words_of(text)}


def best_page(query: Query, chunk: RetrievedChunk, taken: AbstractSet[int] = frozenset()) -> int | None:
    """The chunk's page under the title of a statement the question needs, else the one where the
    question's terms weigh most (each by how few of the chunk's pages hold it; the first of equals);
    None when every page is taken."""
    terms = set(query.terms)
    titles = [_words(title) for favoured in query.favoured if favoured.marks_page for title in favoured.titles]
    pages = [(page, text) for page, text in page_segments(chunk) if page not in taken]
    held = {page: terms & set(lexical.query_terms(text, max_terms=100_000)) for page, text in pages}
    weight = (
        {term: math.log(1 + len(pages) / sum(term in h for h in held.values())) for term in set().union(*held.values())}
        if held
        else {}
    )

    def score(page: int, text: str) -> tuple[int, float]:
        headings = _words(" ".join(heading_texts(text)))
        named = any(title <= headings for title in titles)
        return int(named), sum(weight[term] for term in held[page])

    scored = [(score(page, text), -page, page) for page, text in pages]
    return max(scored)[2] if scored else None


def passage_middle(chunk: RetrievedChunk, index: int) -> int | None:
    """The offset in the chunk's text of the middle of its index-th passage (split_passages order).
    Passages follow each other, overlapping by at most 200 characters where a long paragraph was cut."""
    at = 0
    for k, passage in enumerate(split_passages(chunk.text)):
        found = chunk.text.find(passage[:64], at)
        start = found if found >= 0 else at
        if k == index:
            return start + len(passage) // 2
        at = start + max(len(passage) - 200, 1)
    return None


def page_at(chunk: RetrievedChunk, offset: int) -> int:
    """The page holding this offset of the chunk's text."""
    return max(page for start, page in [(0, chunk.first_page), *chunk.page_breaks] if start <= offset)


def passage_page(chunk: RetrievedChunk, index: int) -> int | None:
    """The page holding the middle of the chunk's index-th passage."""
    middle = passage_middle(chunk, index)
    return None if middle is None else page_at(chunk, middle)


def centre_page(
    query: Query, chunk: RetrievedChunk, passage: BestPassage, taken: AbstractSet[int] = frozenset()
) -> int | None:
    """The page a chunk's window turns on: the page of the search's best passage in it, else (no passage
    matches, or its page is taken) its best page by best_page; None when every page is taken."""
    index = passage(query, chunk)
    centre = passage_page(chunk, index) if index is not None else None
    if centre is None or centre in taken:
        centre = best_page(query, chunk, taken)
    return centre


def _pages(chunks: Sequence[RetrievedChunk | None]) -> list[tuple[int, str]]:
    """The pages of consecutive chunks in order, a page cut between two chunks joined again."""
    pages: list[tuple[int, str]] = []
    for chunk in chunks:
        for page, text in page_segments(chunk) if chunk else []:
            if pages and pages[-1][0] == page:
                pages[-1] = (page, pages[-1][1] + text)
            else:
                pages.append((page, text))
    return pages


def window(
    query: Query,
    chunk: RetrievedChunk,
    neighbours: Neighbours,
    passage: BestPassage,
    count_tokens: Callable[[str], int],
    max_tokens: int,
    taken: AbstractSet[int] = frozenset(),
) -> RetrievedChunk | None:
    """The chunk re-cut as whole pages around its centre page (centre_page), within max_tokens, leaving out
    the pages in `taken`; None when all are taken."""
    centre = centre_page(query, chunk, passage, taken)
    if centre is None:
        return None
    before, after = neighbours(chunk)
    pages = [(page, text) for page, text in _pages([before, chunk, after]) if page not in taken or page == centre]
    own = {page for page, _ in page_segments(chunk)}
    at = next(i for i, (page, _) in enumerate(pages) if page == centre)
    lo, hi = at, at + 1
    while lo > 0 and pages[lo - 1][0] in own and _contiguous(pages, lo, hi, lo - 1):
        lo -= 1
    while hi < len(pages) and pages[hi][0] in own and _contiguous(pages, lo, hi, hi):
        hi += 1
    cost = {i: count_tokens(pages[i][1]) for i in range(max(lo - 1, 0), min(hi + 1, len(pages)))}
    used = sum(cost[i] for i in range(lo, hi))
    # The best page at an edge of its chunk gets the page beyond it (a table goes on over the next page),
    # in place of the page at the far end where the cap needs it: the window moves by one page at most.
    if hi == at + 1 and hi < len(pages) and _contiguous(pages, lo, hi, hi):
        if used + cost[hi] <= max_tokens:
            hi, used = hi + 1, used + cost[hi]
        elif lo < at and used + cost[hi] - cost[lo] <= max_tokens:
            hi, used, lo = hi + 1, used + cost[hi] - cost[lo], lo + 1
    elif lo == at and lo > 0 and _contiguous(pages, lo, hi, lo - 1):
        if used + cost[lo - 1] <= max_tokens:
            lo, used = lo - 1, used + cost[lo - 1]
        elif hi - 1 > at and used + cost[lo - 1] - cost[hi - 1] <= max_tokens:
            lo, used, hi = lo - 1, used + cost[lo - 1] - cost[hi - 1], hi - 1
    kept = pages[lo:hi]
    text, breaks = "", []
    for page, page_text in kept:
        if text:
            breaks.append((len(text), page))
        text += page_text
    numbers = {page for page, _ in kept}
    ocr = sorted({p for c in (before, chunk, after) if c for p in c.ocr_pages} & numbers)
    return replace(
        chunk,
        text=text,
        first_page=kept[0][0],
        last_page=kept[-1][0],
        page_breaks=tuple(breaks),
        ocr_pages=tuple(ocr),
    )


def _contiguous(pages: list[tuple[int, str]], lo: int, hi: int, candidate: int) -> bool:
    """A window is a run of pages: one whose neighbour was left out (another window's) stops there."""
    if candidate == hi:
        return pages[candidate][0] - pages[hi - 1][0] <= 1
    return pages[lo][0] - pages[candidate][0] <= 1


def centred(
    query: Query,
    ranked: Sequence[RetrievedChunk],
    neighbours: Neighbours,
    passage: BestPassage,
    count_tokens: Callable[[str], int],
    max_tokens: int,
) -> list[RetrievedChunk]:
    """The ranked sources as windows around their best pages, in the same order (see the module)."""
    taken: dict[int, set[int]] = {}
    out: list[RetrievedChunk] = []
    for chunk in ranked:
        if not chunk.page_breaks:
            pages = set(range(chunk.first_page, chunk.last_page + 1))
            taken.setdefault(chunk.document_id, set()).update(pages)
            out.append(chunk)
            continue
        cut = window(query, chunk, neighbours, passage, count_tokens, max_tokens, taken.get(chunk.document_id, set()))
        if cut is not None:
            taken.setdefault(chunk.document_id, set()).update(range(cut.first_page, cut.last_page + 1))
            out.append(cut)
    return out
