"""OpenDocument (.odt, .ods, .odp: LibreOffice's and OpenOffice's own files, the format many public bodies
exchange): text with its pages, each sheet a page, each slide a page, as their Office twins are read.

All three keep their content in one XML part, `content.xml`, in one vocabulary: `text:h` headings with their
outline level, `text:p` paragraphs (`text:s` runs of spaces, `text:tab`, `text:line-break`), `table:table`
tables. A text document holds no page layout, only the page breaks LibreOffice saw when it last laid the
document out (`text:soft-page-break`) and those a paragraph style asks for (`fo:break-before="page"`), which
give the pages a citation names. A sheet's repeated rows and columns (`number-rows-repeated`: a saved sheet
often ends in a million empty rows) are expanded only where they hold values, within MAX_CELLS. The XML is
parsed without entities or network access; the package is checked for compression bombs first.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docqa.core.errors import ReadError
from docqa.core.files import PACKAGE_KINDS
from docqa.core.types import Page, ParsedDocument
from ingest.formats.text_units import check_package, heading_line, row_line, tidy

MAX_CELLS = 2_000_000  # as a workbook's (xlsx_reader.MAX_CELLS)
_MAX_EMPTY_REPEAT = 64  # empty cells kept in a row's middle; more say nothing a row line needs
_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
}
_T, _TB, _D = (f"{{{_NS[p]}}}" for p in ("text", "table", "draw"))
_PAGE_BREAK = object()
_LABEL_ONLY = re.compile(r"## Sheet: .*$")  # a sheet's heading, which docqa writes, not the file's text


def read_odf(path: Path) -> ParsedDocument:
    kind = PACKAGE_KINDS[path.suffix.lower()]
    check_package(path, kind)
    root = _content(path, kind)
    body = root.find("office:body", _NS)
    if body is None or not len(body):
        raise ReadError(f"not a readable {kind}: content.xml has no body")
    content = body[0]
    if path.suffix.lower() == ".ods":
        pages, warnings = _sheets(content)
    elif path.suffix.lower() == ".odp":
        pages, warnings = _slides(content), []
    else:
        pages, warnings = _text_pages(content, _breaking_styles(root)), []
    if not any(line and not _LABEL_ONLY.match(line) for text in pages for line in text.splitlines()):
        raise ReadError(f"the {kind} has no text")
    return ParsedDocument([Page(n, text) for n, text in enumerate(pages, 1)], warnings)


def _content(path: Path, kind: str) -> Any:
    import lxml.etree  # imported in the reading child only

    try:
        with zipfile.ZipFile(path) as package:
            data = package.read("content.xml")
        parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        return lxml.etree.fromstring(data, parser)
    except (KeyError, zipfile.BadZipFile, lxml.etree.XMLSyntaxError, ValueError) as exc:
        raise ReadError(f"not a readable {kind}: {type(exc).__name__}: {exc}") from None


def _breaking_styles(root: Any) -> set[str]:
    """The automatic paragraph styles that start a new page (fo:break-before="page")."""
    names = set()
    for style in root.iterfind("office:automatic-styles/style:style", _NS):
        props = style.find("style:paragraph-properties", _NS)
        if props is not None and props.get(f"{{{_NS['fo']}}}break-before") == "page":
            names.add(style.get(f"{{{_NS['style']}}}name"))
    return names


def _text_pages(content: Any, breaking: set[str]) -> list[str]:
    pages: list[list[str]] = [[]]
    for piece in _blocks(content, breaking):
        if piece is _PAGE_BREAK:
            if pages[-1]:
                pages.append([])
        elif isinstance(piece, str) and piece:
            pages[-1].append(piece)
    return ["\n\n".join(page) for page in pages if page] or [""]


def _blocks(element: Any, breaking: set[str]) -> Iterator[object]:
    """Headings, paragraphs, list items and tables in reading order, with page breaks where they fall."""
    for child in element:
        tag = child.tag
        if tag == f"{_T}soft-page-break":
            yield _PAGE_BREAK
        elif tag in (f"{_T}h", f"{_T}p"):
            if child.get(f"{_T}style-name") in breaking:
                yield _PAGE_BREAK
            if child.find(f".//{_T}soft-page-break") is not None:
                yield _PAGE_BREAK  # a page starts inside it: cite the paragraph on its later page
            text = tidy(_text(child))
            level = min(_count(child.get(f"{_T}outline-level")), 6) if tag == f"{_T}h" else 0
            yield heading_line(text, level) if level and text else text
        elif tag == f"{_TB}table":
            yield "\n".join(_row_lines(child, [MAX_CELLS]))
        elif tag in (f"{_T}list", f"{_T}list-item", f"{_T}section", f"{_T}list-header"):
            yield from _blocks(child, breaking)


def _text(element: Any) -> str:
    """A paragraph's text: runs of spaces, tabs and line breaks as written, notes and annotations left out."""
    out = [element.text or ""]
    for child in element:
        tag = child.tag
        if tag == f"{_T}s":
            out.append(" " * min(_count(child.get(f"{_T}c")), _MAX_EMPTY_REPEAT))
        elif tag == f"{_T}tab":
            out.append("\t")
        elif tag == f"{_T}line-break":
            out.append("\n")
        elif tag not in (f"{_T}note", f"{{{_NS['office']}}}annotation", f"{_T}soft-page-break"):
            out.append(_text(child))
        out.append(child.tail or "")
    return "".join(out)


def _row_lines(table: Any, budget: list[int]) -> list[str]:
    """A table's non-empty rows as labelled lines (text_units.row_line), within the cell budget."""
    return [line for line in (row_line(row) for row in _rows(table, budget)) if line]


def _rows(table: Any, budget: list[int]) -> Iterator[list[str]]:
    """A table's rows as cell texts; repeats expanded where they hold values; stops when budget[0] runs out."""
    for row in table.iter(f"{_TB}table-row"):
        cells: list[str] = []
        for cell in row.iterchildren(f"{_TB}table-cell", f"{_TB}covered-table-cell"):
            text = " ".join(tidy(_text(p)) for p in cell.iter(f"{_T}p", f"{_T}h"))
            repeat = _count(cell.get(f"{_TB}number-columns-repeated"))
            cells += [text] * min(repeat, max(budget[0], 1) if text else _MAX_EMPTY_REPEAT)
        if not any(cells):
            continue
        for _ in range(min(_count(row.get(f"{_TB}number-rows-repeated")), max(budget[0] // len(cells), 1))):
            budget[0] -= len(cells)
            yield cells
            if budget[0] <= 0:
                return


def _count(value: str | None) -> int:
    """A repeat count or level as the file writes it; 1 where it is missing or not a positive number."""
    return int(value) if value and value.isdigit() and int(value) > 0 else 1


def _sheets(content: Any) -> tuple[list[str], list[str]]:
    pages: list[str] = []
    warnings: list[str] = []
    budget = [MAX_CELLS]
    for table in content.iterfind("table:table", _NS):
        name = table.get(f"{_TB}name") or f"Sheet {len(pages) + 1}"
        lines = _row_lines(table, budget)
        head = heading_line(f"Sheet: {name}", 2)
        pages.append("\n".join([head, "", *lines]) if lines else head)
        if budget[0] <= 0:
            warnings.append(f"read up to {MAX_CELLS:,} cells: sheet {name!r} cut, later sheets left out")
            break
    return pages, warnings


def _slides(content: Any) -> list[str]:
    """Each slide as PowerPoint's are read (ingest.formats.pptx_reader): its title as a heading, its text and
    tables, its speaker notes last."""
    pages = []
    for slide in content.iterfind("draw:page", _NS):
        notes = slide.find("presentation:notes", _NS)
        in_notes = set(notes.iter(f"{_D}frame")) if notes is not None else set()
        title, blocks = "", []
        for frame in (f for f in slide.iter(f"{_D}frame") if f not in in_notes):
            tables = list(frame.iter(f"{_TB}table"))
            for table in tables:
                blocks.append("\n".join(_row_lines(table, [MAX_CELLS])))
            if tables:
                continue
            text = "\n".join(line for line in (tidy(_text(p)) for p in frame.iter(f"{_T}p", f"{_T}h")) if line)
            if frame.get(f"{{{_NS['presentation']}}}class") == "title" and not title:
                title = text.replace("\n", " ")
            elif text:
                blocks.append(text)
        said = tidy(" ".join(_text(p) for p in notes.iter(f"{_T}p"))) if notes is not None else ""
        head = [heading_line(title, 2)] if title else []
        pages.append("\n\n".join([*head, *(b for b in blocks if b), *([f"Notes: {said}"] if said else [])]))
    return pages
