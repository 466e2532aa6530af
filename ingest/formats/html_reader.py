"""HTML (.html, .htm): the visible text in reading order, headings as Markdown headings, tables as rows,
pages where the page's style breaks them.

A filing on EDGAR is HTML, printed as pages: each ends with an element whose style says
`page-break-after: always` (or the next starts with `page-break-before`), and those breaks are the page
numbers a citation names; a page without them is one page. Scripts, styles, forms and what the page hides
(`display: none`, where inline XBRL keeps its hidden facts) are left out. lxml parses it (a real browser's
tolerance of broken markup); the walk is iterative, so deep nesting cannot exhaust the stack. The bytes are
read in the encoding the file declares (a byte-order mark, a meta charset); where it declares none, decoded as
text files are (ingest.formats.text_decoding: UTF-8, else detected), where lxml alone reads Latin-1 ("cafÃ©").
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docqa.core.errors import ReadError
from docqa.core.types import Page, ParsedDocument
from ingest.formats.text_decoding import decode_text
from ingest.formats.text_units import heading_line, row_line, tidy

_SKIPPED = frozenset({"script", "style", "noscript", "template", "head", "form", "button", "select", "svg", "iframe"})
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "blockquote", "pre", "ul", "ol",
     "li", "dl", "dt", "dd", "figure", "figcaption", "center", "address", "hr", "caption", "body"}
)  # fmt: skip
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_HIDDEN = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_BREAK_BEFORE = re.compile(r"(?:page-)?break-before\s*:\s*(?:always|page)", re.IGNORECASE)
_BREAK_AFTER = re.compile(r"(?:page-)?break-after\s*:\s*(?:always|page)", re.IGNORECASE)
MAX_DEPTH = 2048  # libxml2's depth limit with huge_tree
# Tags that format text and carry no structure: where they nest past MAX_DEPTH, the text is read without them.
_INLINE_TAGS = re.compile(
    rb"</?(?:font|span|b|i|u|s|em|strong|small|big|a|sup|sub|tt|strike|nobr|ins|del)\b[^>]*>", re.I
)


class _Pages:
    """Text gathered into lines, lines into blocks, blocks into pages."""

    def __init__(self) -> None:
        self.pages: list[list[str]] = [[]]
        self.line: list[str] = []

    def text(self, text: str | None) -> None:
        if text:
            self.line.append(text.replace("\n", " "))  # a newline in HTML source is a space

    def line_break(self) -> None:
        self.line.append("\n")

    def end_block(self) -> None:
        line = tidy("".join(self.line))
        self.line = []
        if line:
            self.pages[-1].append(line)

    def block(self, line: str) -> None:
        self.end_block()
        if line:
            self.pages[-1].append(line)

    def page_break(self) -> None:
        self.end_block()
        if self.pages[-1]:
            self.pages.append([])


def read_html(path: Path) -> ParsedDocument:
    return read_html_bytes(path.read_bytes())


def read_html_bytes(data: bytes, encoding: str | None = None) -> ParsedDocument:
    """An HTML file's or an email's HTML body's pages (ingest.formats.eml_reader); encoding: what the bytes
    are in, over what they declare (an email body, already decoded by its part's charset)."""
    import lxml.etree
    import lxml.html  # imported in the reading child only

    if not data.strip():
        raise ReadError("the HTML file is empty")
    warnings: list[str] = []
    if encoding is None and not _declares_encoding(data):  # decoded as text files are, not as Latin-1
        text, warnings = decode_text(data)
        data, encoding = text.encode("utf-8"), "utf-8"
    root, too_deep = _parse(data, encoding)
    if too_deep:  # libxml2 stops reading past its depth, saying so only in its error log
        root, too_deep = _parse(_INLINE_TAGS.sub(b"", data), encoding)
        if too_deep:
            raise ReadError(
                f"the HTML nests deeper than {MAX_DEPTH:,} elements, even without its inline tags (font, span, b, "
                "...): the text past that depth would be lost, so the file is not added"
            )
        warnings.append(
            f"the HTML nests deeper than {MAX_DEPTH:,} elements: read without its inline tags (font, span, b, ...)"
        )
    out = _Pages()
    skipping: list[Any] = []  # the elements whose subtree is being left out
    for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if skipping:
            if event == "end" and element is skipping[-1]:
                skipping.pop()
                _end(out, element, tag)
            continue
        if event == "start":
            hidden = not tag or tag in _SKIPPED or _HIDDEN.search(element.get("style", ""))
            if hidden or _start(out, element, tag):  # left out, or read whole (a heading, a table)
                skipping.append(element)
        else:
            _end(out, element, tag)
    out.end_block()
    texts = ["\n\n".join(page) for page in out.pages if page]
    if not texts:
        raise ReadError("the HTML file has no visible text")
    title = root.findtext(".//title") if hasattr(root, "findtext") else None
    return ParsedDocument([Page(n, text) for n, text in enumerate(texts, 1)], warnings, title=_title(title))


def _parse(data: bytes, encoding: str | None) -> tuple[Any, bool]:
    """The document's root, and whether the parser stopped at its depth limit. huge_tree lifts libxml2's
    limit from 256 elements (old filings leave 400 <font> tags unclosed, and everything past the 256th was cut
    without a word) to MAX_DEPTH."""
    import lxml.etree
    import lxml.html

    try:
        parser = lxml.html.HTMLParser(encoding=encoding, huge_tree=True)
        root = lxml.html.document_fromstring(data, parser=parser)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise ReadError(f"not readable HTML: {exc}") from None
    return root, any("Excessive depth" in error.message for error in parser.error_log)


def _declares_encoding(data: bytes) -> bool:
    """A byte-order mark, or a charset in the first 4 KiB (a meta tag, an XML declaration)."""
    return data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or b"charset" in data[:4096].lower()


def _start(out: _Pages, element: Any, tag: str) -> bool:
    """What an element's start adds; True when it was read whole (its subtree is not walked)."""
    if _BREAK_BEFORE.search(element.get("style", "")):
        out.page_break()
    if tag in _HEADINGS:
        out.block(heading_line(element.text_content(), _HEADINGS[tag]))
        return True
    if tag == "table":
        rows = [row_line(cell.text_content() for cell in row.iterchildren("td", "th")) for row in element.iter("tr")]
        out.block("\n".join(r for r in rows if r))
        return True
    if tag == "br":
        out.line_break()
    elif tag in _BLOCKS:
        out.end_block()
    out.text(element.text)
    return False


def _end(out: _Pages, element: Any, tag: str) -> None:
    if tag in _BLOCKS:
        out.end_block()
    if tag and _BREAK_AFTER.search(element.get("style", "")):
        out.page_break()
    out.text(element.tail)


def _title(text: str | None) -> str | None:
    """A page's <title>, its white space folded; None where it has none."""
    return " ".join((text or "").split()) or None
