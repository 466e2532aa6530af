"""Running headers and footers: the lines a document prints at the top or bottom of most of its pages
("Table of Contents", a page number, "3M Company 2018 Form 10-K", a prospectus's "招股意向书" and its
"1-1-23"), recognised per document and left out of its text.

They are no part of what a page says. In the keyword index they put the same words into every passage;
in a quote that crosses a page break they sit inside the quoted span ("47 / Table of Contents"), and the
citation named the later page for a passage that sits on the earlier one; the model reads them as text.
A line is furniture when, with its digits read as one (page numbers change, the line does not), it is one
of the first or last EDGE_LINES lines of at least FURNITURE_SHARE of the document's pages (and of
MIN_PAGES of them; pages too short to have a middle are left as they are): 3M's 10-K gives "#" on 146
of 160 pages and "table of contents" on 133; a CUAD contract
its confidentiality legend on all 20; a prospectus its running title on 220 of 243.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

EDGE_LINES = 3
FURNITURE_SHARE = 0.3
MIN_PAGES = 3
_DIGITS = re.compile(r"\d+")


def _key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()).lower())


def _edge_indices(lines: Sequence[str]) -> set[int]:
    """Where a page's first and last EDGE_LINES non-empty lines are; none for a page so short that its edges
    are all of it."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return set(filled[:EDGE_LINES] + filled[-EDGE_LINES:]) if len(filled) > 2 * EDGE_LINES + 1 else set()


def _edges(text: str) -> list[str]:
    lines = text.split("\n")
    return [lines[i] for i in sorted(_edge_indices(lines))]


def furniture(pages: Sequence[str]) -> set[str]:
    """The keys of the lines that are the document's running headers and footers."""
    full = [text for text in pages if _edges(text)]
    if len(full) < max(MIN_PAGES, 4):
        return set()
    seen = Counter(key for text in full for key in {_key(line) for line in _edges(text)})
    need = max(MIN_PAGES, int(FURNITURE_SHARE * len(full) + 0.999))
    return {key for key, count in seen.items() if count >= need and key}


def strip_furniture(pages: Sequence[str]) -> tuple[list[str], int]:
    """The pages without their running headers and footers (at the pages' edges only), and how many lines
    were left out."""
    keys = furniture(pages)
    if not keys:
        return list(pages), 0
    removed = 0
    out = []
    for text in pages:
        lines = text.split("\n")
        edge = _edge_indices(lines)
        kept = [line for i, line in enumerate(lines) if i not in edge or _key(line) not in keys]
        removed += len(lines) - len(kept)
        out.append("\n".join(kept).strip("\n"))
    return out, removed
