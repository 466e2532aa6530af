"""Excel (.xlsx): each worksheet a page, its rows as lines, with the sheet's name and cell range on top.

A citation names the sheet (its page number is the sheet's place in the workbook, its heading the sheet's
name and used range). Cells give their values as last calculated (what the user saw), never their formulas;
links to other workbooks are not followed. A row's cells are joined by " | ", so a figure keeps its row's
label. A workbook past MAX_CELLS is cut there and says so.
"""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path
from typing import Any

from docqa.core.errors import ReadError
from docqa.core.types import Page, ParsedDocument
from ingest.formats.text_units import check_package, heading_line, row_line

MAX_CELLS = 2_000_000  # cells read per workbook (a sheet of 200,000 rows x 10 columns)


def read_xlsx(path: Path) -> ParsedDocument:
    check_package(path, "Excel")
    import lxml.etree
    import openpyxl  # imported in the reading child only

    try:
        book = openpyxl.load_workbook(str(path), read_only=True, data_only=True, keep_links=False)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError, lxml.etree.XMLSyntaxError) as exc:
        raise ReadError(f"not a readable Excel workbook: {type(exc).__name__}: {exc}") from None
    pages: list[Page] = []
    warnings: list[str] = []
    left = MAX_CELLS
    try:
        for number, sheet in enumerate(book.worksheets, 1):
            lines, used, read = _sheet_rows(sheet, left)
            left -= read
            head = heading_line(f"Sheet: {sheet.title}" + (f" ({used})" if used else ""), 2)
            pages.append(Page(number, "\n".join([head, "", *lines]) if lines else head))
            if left <= 0:
                warnings.append(f"read up to {MAX_CELLS:,} cells: sheet {sheet.title!r} cut, later sheets left out")
                break
    finally:
        book.close()
    if not any(len(page.text.splitlines()) > 1 for page in pages):
        raise ReadError("the Excel workbook has no cell values")
    return ParsedDocument(pages, warnings)


def _sheet_rows(sheet: Any, budget: int) -> tuple[list[str], str, int]:
    """The sheet's non-empty rows as lines, its used range ("A1:F40") and how many cells were read."""
    lines: list[str] = []
    read = 0
    first = last = None
    width = 0
    for row in sheet.iter_rows(values_only=False):
        values = [_cell_text(cell.value) for cell in row if hasattr(cell, "value")]
        read += len(values)
        line = row_line(values)
        if line:
            number = next((cell.row for cell in row if hasattr(cell, "row")), None)
            first, last = first or number, number or last
            width = max(width, len(values))
            lines.append(line)
        if read >= budget:
            break
    used = f"A{first}:{_column(width)}{last}" if first and last and width else ""
    return lines, used, read


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return f"{value:.10g}" if not value.is_integer() or abs(value) >= 1e15 else str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


def _column(n: int) -> str:
    """1 -> A, 27 -> AA."""
    name = ""
    while n:
        n, rest = divmod(n - 1, 26)
        name = chr(65 + rest) + name
    return name
