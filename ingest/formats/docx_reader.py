"""Word (.docx): the body's paragraphs and tables in their order, pages where the document marks them.

A .docx holds no page layout, only what Word recorded: explicit page breaks, and the page breaks Word saw
when it last laid the document out (`w:lastRenderedPageBreak`), which a document saved by Word carries at
every page start. Those give the page numbers a citation names; a document written by other software
without them is one page. Headings (styles "Title", "Heading 1".."Heading 6") become Markdown headings;
tables become rows. Headers, footers, comments and tracked deletions are left out.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docqa.core.errors import ReadError
from docqa.core.types import Page, ParsedDocument
from ingest.formats.text_units import check_package, heading_line, row_line, tidy

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE = re.compile(r"heading\s*([1-6])$", re.IGNORECASE)
_PAGE_BREAK = object()  # a place in the text where a new page starts


def read_docx(path: Path) -> ParsedDocument:
    check_package(path, "Word")
    import docx  # python-docx, imported in the reading child only
    import lxml.etree
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, KeyError, ValueError, lxml.etree.XMLSyntaxError) as exc:
        raise ReadError(f"not a readable Word document: {exc}") from None
    pieces: list[object] = []
    styles = {str(style.style_id): str(style.name) for style in document.styles}
    for element in document.element.body.iterchildren():
        if element.tag == f"{_W}p":
            pieces += _paragraph(element, _style_name(styles, element))
        elif element.tag == f"{_W}tbl":
            pieces.append("\n".join(_table(element)))
    pages = _pages(pieces)
    if not any(page.text.strip() for page in pages):
        raise ReadError("the Word document has no text")
    title = (document.core_properties.title or "").strip() or None  # File > Properties > Title
    return ParsedDocument(pages, [], title=title)


def _style_name(styles: dict[str, str], paragraph: Any) -> str:
    found = paragraph.find(f"{_W}pPr/{_W}pStyle")
    style_id = str(found.get(f"{_W}val") or "") if found is not None else ""
    return styles.get(style_id, style_id)


def _paragraph(element: Any, style: str) -> list[object]:
    """A paragraph's text with its page breaks where they fall; a heading as a Markdown heading."""
    out: list[object] = []
    text: list[str] = []
    for node in element.iter(f"{_W}t", f"{_W}tab", f"{_W}br", f"{_W}lastRenderedPageBreak"):
        tag = node.tag
        if tag == f"{_W}t":
            text.append(node.text or "")
        elif tag == f"{_W}tab":
            text.append("\t")
        elif tag == f"{_W}br" and node.get(f"{_W}type") != "page":
            text.append("\n")
        else:  # a page break, rendered or explicit
            out += ["".join(text), _PAGE_BREAK]
            text = []
    out.append("".join(text))
    level = _heading_level(style)
    if level:
        return [heading_line(t, level) if isinstance(t, str) and t.strip() else t for t in out]
    return [tidy(t) if isinstance(t, str) else t for t in out]


def _heading_level(style: str) -> int:
    if style.lower() == "title":
        return 1
    found = _HEADING_STYLE.search(style)
    return int(found.group(1)) if found else 0


def _table(element: Any) -> list[str]:
    rows = []
    for row in element.iter(f"{_W}tr"):
        cells = ["".join(t.text or "" for t in cell.iter(f"{_W}t")) for cell in row.iterchildren(f"{_W}tc")]
        line = row_line(cells)
        if line:
            rows.append(line)
    return rows


def _pages(pieces: list[object]) -> list[Page]:
    """Pieces (paragraphs, tables) joined into pages, a blank line between them; breaks with no text between
    them (Word records an explicit break's page start as well) start one page."""
    pages: list[list[str]] = [[]]
    for piece in pieces:
        if piece is _PAGE_BREAK:
            if any(line.strip() for line in pages[-1]):
                pages.append([])
        else:
            pages[-1].append(str(piece))
    texts = ["\n\n".join(line for line in lines if line.strip()) for lines in pages]
    return [Page(n, text) for n, text in enumerate(texts, 1)]
