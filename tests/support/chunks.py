"""Retrieved chunks built from their pages' texts, for tests of windows, focus and citations."""

from __future__ import annotations

from docqa.core.types import RetrievedChunk


def paged_chunk(
    pages: dict[int, str], *, chunk_id: int = 1, ordinal: int = 0, name: str = "10k.pdf", ocr: tuple[int, ...] = ()
) -> RetrievedChunk:
    """A chunk of document 1 whose text is these pages in order, with a page break where each starts."""
    text, breaks = "", []
    for page, page_text in pages.items():
        if text:
            breaks.append((len(text), page))
        text += page_text
    numbers = list(pages)
    return RetrievedChunk(chunk_id, 1, name, ordinal, text, numbers[0], numbers[-1], 1.0, tuple(breaks), ocr)
