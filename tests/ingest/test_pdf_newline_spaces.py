"""PDFs whose font maps the word space to a newline character (some HTML-to-PDF conversions of filings): PDFium
reads every word as a line of its own, and the reader puts the spaces back from the glyphs' positions. The PDF
is written by the tests' own PDF factory, with the ToUnicode map such files carry."""

from __future__ import annotations

from pathlib import Path

from ingest.pdf_text import page_texts
from tests.support.pdf_factory import text_pdf

# The space code (0x20) maps to U+000A, the printable codes to themselves.
SPACE_AS_NEWLINE = (
    b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Sp def "
    b"1 begincodespacerange <00> <FF> endcodespacerange "
    b"2 beginbfrange <20> <20> <000A> <21> <7E> <0021> endbfrange endcmap end end"
)


def test_a_newline_character_between_words_of_one_line_is_read_as_a_space(tmp_path: Path) -> None:
    lines = ["MGM RESORTS INTERNATIONAL", "CONSOLIDATED BALANCE SHEETS", "Cash and cash equivalents 1,526,762"]
    path = text_pdf(tmp_path / "filing.pdf", [[(line, False) for line in lines]], to_unicode=SPACE_AS_NEWLINE)
    (text,) = page_texts(path).texts
    assert text.replace("\r\n", "\n").split("\n") == lines  # the lines stay lines; the words are joined
