"""A source cut to a token budget around the passage that answers, for prompts that must stay short: what a
CPU's prompt keeps of a source where none of its paragraphs holds the question's words (otherwise its best
paragraphs are kept: docqa.service.asking.Asker.fit_to_budget, docs/benchmarks/reading.md).

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
    whole = count_tokens(chunk.text)
    if whole <= max_tokens:
        return chunk
    centre = _centre(query, chunk, passage)
    text = chunk.text

    counted: dict[tuple[int, int], int] = {}  # widths that snap to the same whole lines are one span

    def tokens(half: int) -> int:
        span = _span(text, centre, half)
        if span not in counted:
            counted[span] = count_tokens(cut(chunk, *span).text)
        return counted[span]

    # half-widths in characters: lo fits, hi does not, with their token counts
    lo, lo_tokens, hi, hi_tokens = 0, 0, *_too_wide(chunk, centre, whole, max_tokens, tokens)
    while hi - lo > max(16, hi // 64):  # to within 1.6% of the width: each step tokenizes the span again
        # tokens grow about linearly with the width: aim where the line through the bounds meets the
        # budget, kept off both ends so that each step narrows the bracket
        aim = lo + (hi - lo) * (max_tokens - lo_tokens) // max(hi_tokens - lo_tokens, 1)
        margin = max(8, (hi - lo) // 32)
        mid = min(max(aim, lo + margin), hi - margin)
        n = tokens(mid)
        if n <= max_tokens:
            lo, lo_tokens = mid, n
        else:
            hi, hi_tokens = mid, n
    start, end = _span(text, centre, lo)
    return cut(chunk, start, end)


def _too_wide(
    chunk: RetrievedChunk, centre: int, whole: int, max_tokens: int, tokens: Callable[[int], int]
) -> tuple[int, int]:
    """A half-width (characters) whose span does not fit, with its tokens: twice what the chunk's own
    characters per token make of the budget, where that is already too wide (it nearly always is), else the
    whole chunk. The search then tokenizes spans of a few budgets, not the whole chunk ten times over (a
    4k-token chunk cut to 512 tokens took 10 tokenizations of ~3k tokens each: 0.1 s a source with Qwen's
    tokenizer)."""
    guess = 2 * max_tokens * len(chunk.text) // max(whole, 1)
    if guess < len(chunk.text) and (n := tokens(guess)) > max_tokens:
        return guess, n
    return len(chunk.text), whole


def per_source(budget: int, sources: int) -> int:
    return max(MIN_SOURCE_TOKENS, budget // max(sources, 1))


def windows(
    query: Query,
    chunks: list[RetrievedChunk],
    passage: BestPassage,
    count_tokens: Callable[[str], int],
    budget: int,
) -> list[RetrievedChunk]:
    """Each chunk cut to its part of the budget around its best passage (`focus`): where no paragraph holds
    the question's words for packing to choose from (a dense-only hit)."""
    share = per_source(budget, len(chunks))
    return [focus(query, c, passage, count_tokens, share) for c in chunks]


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


def cut(chunk: RetrievedChunk, start: int, end: int) -> RetrievedChunk:
    """The chunk's text [start, end), marked where it was cut, its pages and OCR marks following the cut."""
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
