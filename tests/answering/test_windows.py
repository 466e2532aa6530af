"""Prompt windows (docqa.answering.windows): sources re-cut as whole pages around their best page."""

from __future__ import annotations

from docqa.answering.windows import best_page, centred, passage_page
from docqa.core.query import Query
from docqa.core.types import RetrievedChunk
from tests.support.chunks import paged_chunk
from tests.support.profiles import understand


def _chunk(chunk_id: int, ordinal: int, pages: dict[int, str], ocr: tuple[int, ...] = ()) -> RetrievedChunk:
    return paged_chunk(pages, chunk_id=chunk_id, ordinal=ordinal, ocr=ocr)


def _filler(n: int) -> str:
    return f"Page {n} discusses markets, competition and risks of the business. " * 3 + "\n"


# Three chunks of a filing: pages 1-4, 5-8, 9-12; the cash flow statement on page 8, going on over page 9.
DOC = [
    _chunk(10, 0, {n: _filler(n) for n in range(1, 5)}),
    _chunk(11, 1, {
        **{n: _filler(n) for n in range(5, 8)},
        8: "Consolidated Statements of Cash Flows\nNet income 5,363\nDepreciation 1,488\n",
    }),
    _chunk(12, 2, {9: "Purchases of property, plant and equipment (1,577)\n", **{n: _filler(n) for n in range(10, 13)}},
           ocr=(9,)),
]  # fmt: skip
QUESTION = understand("What is the FY2018 capital expenditure amount for Acme?")


def _neighbours(chunk: RetrievedChunk) -> tuple[RetrievedChunk | None, RetrievedChunk | None]:
    at = chunk.ordinal
    return (DOC[at - 1] if at > 0 else None), (DOC[at + 1] if at + 1 < len(DOC) else None)


def _no_passage(query: Query, chunk: RetrievedChunk) -> int | None:
    return None  # no keyword index here: windows centre on best_page


def _words(text: str) -> int:
    return len(text.split())


def test_the_statement_the_question_needs_is_the_best_page() -> None:
    assert best_page(QUESTION, DOC[1]) == 8  # no term of the question on it, but its title is the statement's
    robots = _chunk(30, 0, {1: _filler(1), 2: _filler(2) + "We shipped robots.", 3: _filler(3)})
    assert best_page(understand("How many robots were shipped?"), robots) == 2  # the page holding most of its terms


def test_a_best_page_at_the_chunks_edge_brings_the_page_beyond_it() -> None:
    roomy = 4 * _words(_filler(1))
    [window] = centred(QUESTION, [DOC[1]], _neighbours, _no_passage, _words, roomy)
    assert (window.first_page, window.last_page) == (5, 9)  # page 9, in the next chunk: the table goes on
    assert window.chunk_id == 11 and "Purchases of property" in window.text
    assert [page for _, page in window.page_breaks] == [6, 7, 8, 9]
    assert window.ocr_pages == (9,)  # the next chunk's OCR'd page came with it
    tight = _words(DOC[1].text)  # no room: the page at the far end makes way
    [window] = centred(QUESTION, [DOC[1]], _neighbours, _no_passage, _words, tight)
    assert (window.first_page, window.last_page) == (6, 9) and _words(window.text) <= tight
    middle = _chunk(11, 1, {5: _filler(5), 6: _filler(6) + "capital expenditure amount", 7: _filler(7)})
    [window] = centred(QUESTION, [middle], _neighbours, _no_passage, _words, roomy)
    assert window is not middle and (window.first_page, window.last_page) == (5, 7)  # not at an edge: as it was


def test_the_search_s_best_passage_chooses_the_page() -> None:
    lines = "".join(f"Line {i} of page {{n}} discusses markets and competition.\n" for i in range(40))
    long = _chunk(11, 1, {n: lines.format(n=n) for n in (5, 6, 7)})  # a passage (~2,000 characters) a page
    assert [passage_page(long, k) for k in range(3)] == [5, 6, 7]
    [window] = centred(QUESTION, [long], _neighbours, lambda question, chunk: 0, _words, 10_000)
    assert (window.first_page, window.last_page) == (4, 7)  # its first page is the best: page 4 joins it


def test_windows_of_one_document_share_no_page_and_text_sources_stay_whole() -> None:
    cap = 4 * _words(_filler(1))
    text = RetrievedChunk(20, 2, "notes.txt", 0, "plain text", 1, 1, 1.0)
    first, second, third = centred(QUESTION, [DOC[1], text, DOC[0]], _neighbours, _no_passage, _words, cap)
    assert (first.first_page, first.last_page) == (5, 9)
    assert second is text  # one "page": kept as it is
    assert (third.first_page, third.last_page) == (1, 4)
    first, later = centred(QUESTION, [DOC[1], DOC[2]], _neighbours, _no_passage, _words, cap)
    assert (later.first_page, later.last_page) == (10, 12)  # what the first window left of it
