"""CSV and TSV: the rows as lines, in pages of ROWS_PER_PAGE, each page headed by the file's name, its rows'
span and the header row again.

A table's figures mean nothing without their column labels, and a chunk taken from the middle of a 5,000-row
export would not hold the header row: so every page repeats it, and a citation names the rows it came from
("rows 102-201 of 5,000"). A row's cells are joined by " | " as Excel's are (ingest.formats.xlsx_reader), so a
figure keeps its row's label. The delimiter is sniffed (comma, semicolon, tab, pipe; a .tsv is tab-separated);
the bytes are decoded as text files' are (ingest.formats.text_decoding). A table past MAX_CELLS is cut
there and says so.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from docqa.core.errors import ReadError
from docqa.core.types import Page, ParsedDocument
from ingest.formats.text_decoding import decode_text
from ingest.formats.text_units import heading_line, row_line

ROWS_PER_PAGE = 100
MAX_CELLS = 2_000_000  # as a workbook's (xlsx_reader.MAX_CELLS)
MAX_FIELD_CHARS = 1_000_000  # one cell; csv's own default (131,072) refuses long notes fields
_NO_FIELD_LIMIT = 2**31 - 1
_DELIMITERS = ",;\t|"


def read_csv(path: Path) -> ParsedDocument:
    """A .csv or .tsv file as pages of rows under their header."""
    text, warnings = decode_text(path.read_bytes())
    parsed = read_table_text(text, path.name, tab_separated=path.suffix.lower() == ".tsv")
    return ParsedDocument(parsed.pages, [*warnings, *parsed.warnings])


def read_table_text(text: str, name: str, tab_separated: bool = False) -> ParsedDocument:
    """A decoded CSV or TSV file as pages; ReadError where it holds no values or is not a table."""
    rows, warnings = _rows(text, "\t" if tab_separated else _sniffed_delimiter(text))
    lines = [line for line in (row_line(row) for row in rows) if line]
    if not lines:
        raise ReadError("the table has no values")
    header, body = lines[0], lines[1:]
    pages = []
    for number, start in enumerate(range(0, max(len(body), 1), ROWS_PER_PAGE), 1):
        chunk = body[start : start + ROWS_PER_PAGE]
        span = f"rows {start + 2}-{start + 1 + len(chunk)} of {len(body) + 1}" if chunk else "header row only"
        pages.append(Page(number, "\n".join([heading_line(f"Table: {name} ({span})", 2), "", header, *chunk])))
    return ParsedDocument(pages, warnings)


def _sniffed_delimiter(text: str) -> str:
    """The delimiter of the first lines, as csv.Sniffer reads them; a comma where it cannot tell."""
    sample = "\n".join(text[:65536].splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return ","


def _rows(text: str, delimiter: str) -> tuple[list[list[str]], list[str]]:
    """The table's rows, cut at MAX_CELLS (said in a warning)."""
    rows: list[list[str]] = []
    cells = 0
    # csv's own limit is process-wide: set once to "no limit" (threads reading at once agree) and checked here
    csv.field_size_limit(_NO_FIELD_LIMIT)
    try:
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
            if any(len(cell) > MAX_FIELD_CHARS for cell in row):
                raise ReadError(
                    f"not a readable table: a cell in row {len(rows) + 1} is over {MAX_FIELD_CHARS:,} characters"
                )
            rows.append(row)
            cells += len(row)
            if cells >= MAX_CELLS:
                return rows, [f"read up to {MAX_CELLS:,} cells: the rows after row {len(rows):,} left out"]
    except csv.Error as exc:
        raise ReadError(f"not a readable table: {exc} (row {len(rows) + 1})") from None
    return rows, []
