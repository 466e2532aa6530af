"""Sources cut to a prompt budget around their best passage (docqa.answering.focus)."""

from __future__ import annotations

from docqa.answering.focus import MARK, MIN_SOURCE_TOKENS, focus, per_source
from docqa.answering.windows import passage_middle
from docqa.core.query import Query
from docqa.core.types import RetrievedChunk
from tests.support.chunks import paged_chunk
from tests.support.profiles import understand


def _words(text: str) -> int:
    return len(text.split())


def _filler(n: int, lines: range = range(20)) -> str:
    return "".join(f"Page {n} line {i} discusses markets, competition and risks.\n" for i in lines)


CHUNK = paged_chunk(
    {
        1: _filler(1),
        2: _filler(2),
        3: _filler(3, range(10))
        + "Purchases of property, plant and equipment were 1,577 in fiscal 2018.\n"
        + _filler(3, range(10, 20)),
        4: _filler(4),
        5: _filler(5),
    },
    ocr=(1, 3),
)
QUESTION = understand("What were purchases of property, plant and equipment in fiscal 2018?")


def _by_words(query: Query, chunk: RetrievedChunk) -> int | None:
    return None  # no keyword passage: the best page's middle is the centre


def test_a_source_over_its_share_keeps_whole_lines_around_the_answer_and_its_pages() -> None:
    cut = focus(QUESTION, CHUNK, _by_words, _words, 120)
    assert _words(cut.text) <= 120 and "1,577 in fiscal 2018" in cut.text
    assert cut.text.startswith(MARK + "\n") and cut.text.endswith("\n" + MARK)
    assert all(line.endswith(".") or line == MARK for line in cut.text.splitlines())  # never a cut line
    assert cut.first_page <= 3 <= cut.last_page and cut.ocr_pages == ((3,) if cut.first_page > 1 else (1, 3))
    for offset, page in cut.page_breaks:
        assert cut.text[offset:].startswith(f"Page {page} line 0")  # each break still where its page starts


def test_the_keyword_passage_wins_over_the_best_page_and_a_fitting_source_is_left_alone() -> None:
    last = 2  # the chunk's last passage: its middle is on page 5
    assert (middle := passage_middle(CHUNK, last)) is not None and middle > CHUNK.page_breaks[-1][0]
    cut = focus(QUESTION, CHUNK, lambda q, c: last, _words, 120)
    assert cut.first_page >= 4 and cut.last_page == 5 and "1,577" not in cut.text
    assert focus(QUESTION, CHUNK, _by_words, _words, 10_000) is CHUNK


def test_each_source_gets_a_share_of_the_budget_but_never_too_little() -> None:
    assert per_source(3072, 3) == 1024
    assert per_source(3072, 12) == MIN_SOURCE_TOKENS
