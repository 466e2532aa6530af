"""PowerPoint (.pptx): each slide a page (its number the slide's), its title a heading, then the text of
its shapes from top to bottom, its tables as rows and its speaker notes."""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from docqa.core.errors import ReadError
from docqa.core.types import Page, ParsedDocument
from ingest.formats.text_units import check_package, heading_line, row_line, tidy


def read_pptx(path: Path) -> ParsedDocument:
    check_package(path, "PowerPoint")
    import lxml.etree
    import pptx  # python-pptx, imported in the reading child only
    from pptx.exc import PackageNotFoundError

    try:
        deck = pptx.Presentation(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, lxml.etree.XMLSyntaxError) as exc:
        raise ReadError(f"not a readable PowerPoint deck: {type(exc).__name__}: {exc}") from None
    pages = [Page(number, _slide_text(slide)) for number, slide in enumerate(deck.slides, 1)]
    if not any(page.text.strip() for page in pages):
        raise ReadError("the PowerPoint deck has no text")
    return ParsedDocument(pages, [], title=_deck_title(deck))


def _deck_title(deck: Any) -> str | None:
    """The deck's title property, else its first slide's title placeholder (what a deck is called)."""
    declared = (deck.core_properties.title or "").strip()
    if declared:
        return str(declared)
    for slide in list(deck.slides)[:1]:
        title = slide.shapes.title
        if title is not None and title.has_text_frame and title.text_frame.text.strip():
            return " ".join(title.text_frame.text.split())
    return None


def _slide_text(slide: Any) -> str:
    title_shape = slide.shapes.title
    blocks: list[str] = []
    if title_shape is not None and tidy(title_shape.text_frame.text):
        blocks.append(heading_line(title_shape.text_frame.text, 2))
    for shape in _in_reading_order(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        if getattr(shape, "has_table", False) and shape.has_table:
            rows = [row_line(cell.text for cell in row.cells) for row in shape.table.rows]
            blocks.append("\n".join(r for r in rows if r))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            lines = [tidy(p.text if hasattr(p, "text") else "") for p in shape.text_frame.paragraphs]
            blocks.append("\n".join(line for line in lines if line))
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = tidy(slide.notes_slide.notes_text_frame.text)
        if notes:
            blocks.append(f"Notes: {notes}")
    return "\n\n".join(block for block in blocks if block)


def _in_reading_order(shapes: Iterable[Any]) -> Iterator[Any]:
    """Shapes top to bottom, then left to right; a group's shapes where the group sits."""
    placed = sorted(shapes, key=lambda s: ((s.top or 0) // 10_000, s.left or 0))
    for shape in placed:
        if hasattr(shape, "shapes"):  # a group
            yield from _in_reading_order(shape.shapes)
        else:
            yield shape
