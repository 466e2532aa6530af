"""Rich Text Format (.rtf): the text as Word or WordPad wrote it, pages at its explicit page breaks, table rows
as labelled lines.

Law firms' templates and court filings still travel as RTF. striprtf reads the control words (code pages and
font charsets, so Chinese RTF written as GBK escapes reads right; pictures left out); before it runs, each
explicit page break (`\\page`, not the paragraph property `\\pagebb`) becomes a form feed, which splits the pages
as in text files, and each table row (cells ending in `\\cell`, the row in `\\row`) becomes one line.
"""

from __future__ import annotations

import re
from pathlib import Path

from docqa.core.errors import ReadError
from docqa.core.files import rtf_problem
from docqa.core.types import Page, ParsedDocument
from ingest.formats.text_units import row_line, tidy

_PAGE = re.compile(rb"\\page(?![a-z])")
_FORM_FEED = rb"\\par \\u12 "  # striprtf writes \uN as chr(N): a form feed, which no RTF text holds


def read_rtf(path: Path) -> ParsedDocument:
    from striprtf.striprtf import rtf_to_text  # imported in the reading child only

    data = path.read_bytes()
    if problem := rtf_problem(data):
        raise ReadError(problem)
    try:
        text = rtf_to_text(_PAGE.sub(_FORM_FEED, data).decode("latin-1"), errors="replace")
    except (IndexError, ValueError, LookupError) as exc:  # a malformed group or a code page Python lacks
        raise ReadError(f"not a readable RTF file: {type(exc).__name__}: {exc}") from None
    pages = [_page_text(part) for part in text.replace("\r\n", "\n").split("\f")]
    if not any(pages):
        raise ReadError("the RTF file has no text")
    return ParsedDocument([Page(n, page) for n, page in enumerate(pages, 1)], [])


def _page_text(text: str) -> str:
    """Paragraphs tidied; a table row (striprtf ends each cell with "|") as one labelled line."""
    lines = []
    for line in text.split("\n"):
        lines.append(row_line(line.split("|")[:-1]) if line.rstrip().endswith("|") else tidy(line))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
