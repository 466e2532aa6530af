"""Making citations precise once the answer is known.

A chunk can span several pages. For each source we find the page of its range whose text shares
the most terms with the answer, and whether the answer cites the source as [n].
"""

from __future__ import annotations

import re
from typing import Any

from docqa.core.types import RetrievedChunk
from docqa.store.keyword import lexical

_BRACKET = re.compile(r"\[\s*(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)")


def page_segments(chunk: RetrievedChunk) -> list[tuple[int, str]]:
    """(page number, text) for each page that the chunk's text covers."""
    starts = [(0, chunk.first_page), *chunk.page_breaks]
    segments = []
    for i, (offset, page) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(chunk.text)
        segments.append((page, chunk.text[offset:end]))
    return segments


def with_page_markers(chunk: RetrievedChunk) -> str:
    """The chunk's text with a [page N] line where each page starts, when it spans several."""
    if not chunk.page_breaks:
        return chunk.text
    return "\n".join(f"[page {page}]\n{text.strip()}" for page, text in page_segments(chunk))


def _terms(text: str) -> set[str]:
    query = lexical.match_query(text, max_terms=10_000)
    return set() if query is None else {t.strip('"') for t in query.split(" OR ")}


def best_page(answer: str, chunk: RetrievedChunk) -> int | None:
    if not chunk.page_breaks:
        return chunk.first_page
    wanted = _terms(answer)
    if not wanted:
        return None
    scored = [(len(wanted & _terms(text)), -page, page) for page, text in page_segments(chunk)]
    overlap, _, page = max(scored)
    return page if overlap > 0 else None


def cited_numbers(answer: str) -> set[int]:
    """Source numbers the answer refers to: [1], [2][3], [1, 2]."""
    found: set[int] = set()
    for m in _BRACKET.finditer(answer):
        found.update(int(n) for n in re.split(r"\s*[,，、]\s*", m.group(1)))
    return found


def format_pages(citation: dict[str, Any]) -> str:
    """'p. 2', 'pp. 3-5', or 'p. 4 (chunk covers pp. 3-5)' for a citation as Citation.as_dict gives it."""
    first, last = citation["pages"]
    if first == last:
        return f"p. {first}"
    if citation.get("page"):
        return f"p. {citation['page']} (chunk covers pp. {first}-{last})"
    return f"pp. {first}-{last}"


def sources_footer(citations: list[dict[str, Any]]) -> str:
    """The citations as a plain-text block to append to an answer (for chat clients)."""
    shown = [c for c in citations if c.get("cited")] or citations
    lines = [f"[{c['number']}] {c['document']}, {format_pages(c)}" for c in shown]
    return "\n\nSources:\n" + "\n".join(lines) if lines else ""
