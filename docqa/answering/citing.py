"""Making citations precise once the answer is known.

A chunk can span several pages. For each source we find the page of its range whose text shares
the most terms with the answer, and whether the answer cites the source as [n].
"""

from __future__ import annotations

import re
from typing import Any

from docqa.core.types import RetrievedChunk
from docqa.store.keyword import lexical
from docqa.store.keyword.passage_stems import heading_texts

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


def section_of(chunk: RetrievedChunk, page: int | None, quote: str | None = None) -> str | None:
    """The heading a citation shows: given the quote it marks, the last heading before the quote in the chunk (a
    page holds several clauses: its first heading named "Liability Cap" over a governing-law quote); else the
    first one on the page, else the last one before it in the chunk (a statement's second page is still that
    statement's); for no page, the one over the chunk's start."""
    at = chunk.text.find(quote[:80]) if quote else -1
    if at > 0 and (before := heading_texts(chunk.text[:at])):
        return _tidy(before[-1])
    segments = page_segments(chunk)
    upto = next((i for i, (number, _) in enumerate(segments) if number == page), 0)
    on_page = heading_texts(segments[upto][1])
    if on_page:
        return _tidy(on_page[0])
    before = [h for _, text in segments[:upto] for h in heading_texts(text)]
    return _tidy(before[-1]) if before else None


# A PDF's text layer can space a word's last glyph, or a numeral's letters, apart (kerning read as a gap):
# "Intangible Asset s", "Legal Proceeding s", "PART I V". A heading shown in a citation is joined again.
_LONE_PLURAL_S = re.compile(r"(?<=[A-Za-z]{3}) s\b")
_SPLIT_NUMERAL = re.compile(r"\b(PART|Part|ARTICLE|Article|SCHEDULE|Schedule)\s+([IVXLC](?: [IVXLC])+)\b")


def _tidy(heading: str) -> str:
    heading = " ".join(heading.split())
    heading = _LONE_PLURAL_S.sub("s", heading)
    heading = _SPLIT_NUMERAL.sub(lambda m: f"{m.group(1)} {m.group(2).replace(' ', '')}", heading)
    return heading[:120]


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
        where = f"p. {first}"
    elif citation.get("page"):
        where = f"p. {citation['page']} (chunk covers pp. {first}-{last})"
    else:
        where = f"pp. {first}-{last}"
    if citation.get("section"):
        where += f', "{citation["section"]}"'
    return where + (", read by OCR" if citation.get("ocr") else "")


def shown_citations(citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a chat client is shown: the sources the answer cites, or all of them where it cites none."""
    return [c for c in citations if c.get("cited")] or citations


def citation_label(citation: dict[str, Any]) -> str:
    """'[2] contract.pdf, p. 4': a citation as a chat client names it."""
    return f"[{citation['number']}] {citation['document']}, {format_pages(citation)}"


def sources_footer(citations: list[dict[str, Any]]) -> str:
    """The citations as a plain-text block to append to an answer (for chat clients)."""
    lines = [citation_label(c) for c in shown_citations(citations)]
    return "\n\nSources:\n" + "\n".join(lines) if lines else ""
