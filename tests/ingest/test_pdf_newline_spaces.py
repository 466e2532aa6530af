"""PDFs whose font maps the word space to a newline character (some HTML-to-PDF conversions of filings): PDFium
reads every word as a line of its own, and the reader puts the spaces back from the glyphs' positions. The PDF
is written here by hand, with the ToUnicode map such files carry."""

from __future__ import annotations

from pathlib import Path

from ingest.pdf_text import page_texts


def pdf_with_newline_spaces(lines: list[str]) -> bytes:
    """One page of Helvetica lines, the space code mapped to U+000A by the font's ToUnicode CMap."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Sp def "
        b"1 begincodespacerange <00> <FF> endcodespacerange "
        b"2 beginbfrange <20> <20> <000A> <21> <7E> <0021> endbfrange endcmap end end"
    )
    shown = b" ".join(b"(" + line.encode() + b") Tj 0 -20 Td" for line in lines)
    body = b"BT /F1 12 Tf 72 700 Td " + shown + b" ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(body) + body + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_newline_character_between_words_of_one_line_is_read_as_a_space(tmp_path: Path) -> None:
    path = tmp_path / "filing.pdf"
    lines = ["MGM RESORTS INTERNATIONAL", "CONSOLIDATED BALANCE SHEETS", "Cash and cash equivalents 1,526,762"]
    path.write_bytes(pdf_with_newline_spaces(lines))
    (text,) = page_texts(path).texts
    assert text.replace("\r\n", "\n").split("\n") == lines  # the lines stay lines; the words are joined
