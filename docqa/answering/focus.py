"""A source cut to a token budget around the passage that answers, for prompts that must stay short.

On a CPU the prompt is the wait: a 2-core machine reads ~400 prompt tokens/s with the demo model, so three
whole 4k-token chunks (~12,900 tokens with the prompt) kept a user ~35 s before the first word, and
75-142 s with a larger model. With a prompt budget (`DOCQA_LLM_PROMPT_BUDGET`, 4,096 tokens of document text
by default on a CPU), each source longer than its share keeps the whole lines around its best passage (the
keyword search's, else its best page's middle) instead of its beginning, which is what cutting a whole
prompt down would keep. Its page numbers and OCR marks follow the cut, so the citation still names the
page the kept text is on. Measured on FinanceBench (`python -m bench.prompt_windows --budget N`): an
evidence page stays in the prompt for 0.75 of questions asked of their own filing at 4,096 (0.69 at 3,072
and 2,048, 0.82 at 6,144; 0.84 with whole windows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from docqa.answering.citing import page_segments
from docqa.answering.windows import BestPassage, best_page, page_at, passage_middle
from docqa.core.query import Query
from docqa.core.types import RetrievedChunk

# A source's share never drops below this, however many sources share the budget: less than a few
# paragraphs leaves the model a sentence without its context.
MIN_SOURCE_TOKENS = 384
MARK = "[…]"  # where text was cut, so the model does not read a cut sentence as the document's


def focus(
    query: Query,
    chunk: RetrievedChunk,
    passage: BestPassage,
    count_tokens: Callable[[str], int],
    max_tokens: int,
) -> RetrievedChunk:
    """The chunk itself when it fits max_tokens, else the longest run of its whole lines around its
    centre that does."""
    if count_tokens(chunk.text) <= max_tokens:
        return chunk
    centre = _centre(query, chunk, passage)
    text = chunk.text
    lo, hi = 0, len(text)  # half-widths in characters: lo fits (nothing), hi does not (everything)
    while hi - lo > 16:
        mid = (lo + hi) // 2
        start, end = _span(text, centre, mid)
        if count_tokens(_cut(chunk, start, end).text) <= max_tokens:
            lo = mid
        else:
            hi = mid
    start, end = _span(text, centre, lo)
    return _cut(chunk, start, end)


def per_source(budget: int, sources: int) -> int:
    return max(MIN_SOURCE_TOKENS, budget // max(sources, 1))


def _centre(query: Query, chunk: RetrievedChunk, passage: BestPassage) -> int:
    index = passage(query, chunk)
    middle = passage_middle(chunk, index) if index is not None else None
    if middle is not None:
        return middle
    page = best_page(query, chunk)
    at = 0
    for number, segment in page_segments(chunk):
        if number == page:
            return at + len(segment) // 2
        at += len(segment)
    return len(chunk.text) // 2


def _span(text: str, centre: int, half: int) -> tuple[int, int]:
    """[start, end) of about 2 x half characters around centre, moved inward to whole lines, and slid
    to use the room one edge of the text leaves."""
    start, end = centre - half, centre + half
    if start < 0:
        start, end = 0, min(len(text), end - start)
    if end > len(text):
        start, end = max(0, start - (end - len(text))), len(text)
    if start > 0:
        cut = text.find("\n", start, centre)
        start = cut + 1 if cut >= 0 else start
    if end < len(text):
        cut = text.rfind("\n", centre, end)
        end = cut if cut >= 0 else end
    return start, end


def _cut(chunk: RetrievedChunk, start: int, end: int) -> RetrievedChunk:
    head = f"{MARK}\n" if start > 0 else ""
    tail = f"\n{MARK}" if end < len(chunk.text) else ""
    shift = len(head) - start
    breaks = tuple((offset + shift, page) for offset, page in chunk.page_breaks if start < offset < end)
    first, last = page_at(chunk, start), page_at(chunk, max(start, end - 1))
    return replace(
        chunk,
        text=head + chunk.text[start:end] + tail,
        first_page=first,
        last_page=last,
        page_breaks=breaks,
        ocr_pages=tuple(p for p in chunk.ocr_pages if first <= p <= last),
    )
