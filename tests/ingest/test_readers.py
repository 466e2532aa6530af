"""Readers on real files: the sample PDF, broken and encrypted PDFs, legacy encodings."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.core.errors import ReadError
from ingest.readers import clean_pdf_text, read_document
from tests.support.paths import SAMPLE_DOCS


def test_pdf_is_read_page_by_page() -> None:
    doc = read_document(SAMPLE_DOCS / "annual_report_2025.pdf")
    assert [p.number for p in doc.pages] == [1, 2, 3, 4]
    assert "EUR 184.6 million" in doc.pages[1].text
    assert "2,340 robots" in doc.pages[2].text
    assert doc.warnings == []


def test_truncated_pdf_fails_with_a_clear_reason(tmp_path: Path) -> None:
    bad = tmp_path / "broken.pdf"
    bad.write_bytes((SAMPLE_DOCS / "annual_report_2025.pdf").read_bytes()[:300])
    with pytest.raises(ReadError, match=r"malformed PDF|no text"):
        read_document(bad)


def test_not_a_pdf_at_all(tmp_path: Path) -> None:
    fake = tmp_path / "fake.pdf"
    fake.write_bytes(b"PK\x03\x04 this is a zip")
    with pytest.raises(ReadError, match="no %PDF- header"):
        read_document(fake)


def _encrypt(tmp_path: Path, user_password: str) -> Path:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for page in PdfReader(SAMPLE_DOCS / "annual_report_2025.pdf").pages:
        writer.add_page(page)
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="AES-128")
    out = tmp_path / f"enc-{user_password or 'empty'}.pdf"
    with out.open("wb") as fh:
        writer.write(fh)
    return out


def test_encrypted_pdf_with_empty_user_password_opens(tmp_path: Path) -> None:
    doc = read_document(_encrypt(tmp_path, ""))
    assert "EUR 184.6 million" in doc.pages[1].text


def test_encrypted_pdf_needs_its_password(tmp_path: Path) -> None:
    path = _encrypt(tmp_path, "s3cret")
    with pytest.raises(ReadError, match="encrypted: password required"):
        read_document(path)
    with pytest.raises(ReadError, match="encrypted: the password given does not open it"):
        read_document(path, password="wrong")
    assert "EUR 184.6 million" in read_document(path, password="s3cret").pages[1].text


def test_pdf_without_text_layer_names_the_pages(tmp_path: Path) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.add_blank_page(width=200, height=200)
    out = tmp_path / "scan.pdf"
    with out.open("wb") as fh:
        writer.write(fh)
    with pytest.raises(ReadError, match="no text layer on pages 1-2; OCR not enabled"):
        read_document(out)


def test_gb18030_text_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "合同.txt"
    text = (SAMPLE_DOCS / "supply_contract_zh.txt").read_text("utf-8")
    path.write_bytes(text.encode("gb18030"))
    doc = read_document(path)
    assert "人民币叁佰陆拾万元整" in doc.pages[0].text
    assert doc.warnings and "not UTF-8" in doc.warnings[0]


def test_binary_file_named_txt_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    with pytest.raises(ReadError, match="binary"):
        read_document(path)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_its_byte_order_mark_is_read_as_utf16(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes("Either party may terminate on sixty days notice.".encode(encoding))  # no BOM
    doc = read_document(path)
    assert doc.pages[0].text == "Either party may terminate on sixty days notice." and "\x00" not in doc.pages[0].text
    assert doc.warnings == [f"decoded as {encoding.upper()} (no byte-order mark)"]


def test_a_broken_utf16_file_fails_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "broken.txt"
    path.write_bytes(b"\xff\xfe" + "text".encode("utf-16-le") + b"\x00\xd8")  # a lone high surrogate at the end
    with pytest.raises(ReadError, match="starts with a UTF-16 byte-order mark but is not UTF-16"):
        read_document(path)


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-be"])
def test_utf32_with_its_byte_order_mark_is_read_as_utf32(tmp_path: Path, encoding: str) -> None:
    """Issue 41, item 7: FF FE 00 00 starts UTF-16's mark too; it was read as UTF-16, NUL-separated letters."""
    path = tmp_path / "notes.txt"
    text = "Either party may terminate on sixty days notice."
    path.write_bytes(("\ufeff" + text).encode(encoding) if encoding.endswith("be") else text.encode(encoding))
    doc = read_document(path)
    assert doc.pages[0].text == text and doc.warnings == ["decoded as UTF-32"]


@pytest.mark.parametrize("encoding", ["utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("text", ["Either party may terminate on sixty days notice.\n", "合同约定租金每月一千元。\n"])
def test_utf32_without_its_byte_order_mark_is_read_as_utf32(tmp_path: Path, encoding: str, text: str) -> None:
    """Issue 60 (weak): a UTF-32 file without its mark was refused as binary (or read as UTF-16's NULs)."""
    path = tmp_path / "notes.txt"
    path.write_bytes((text * 20).encode(encoding))
    doc = read_document(path)
    assert doc.pages[0].text == text * 20 and doc.warnings == [f"decoded as {encoding.upper()} (no byte-order mark)"]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_chinese_utf16_without_its_byte_order_mark_is_read(tmp_path: Path, encoding: str) -> None:
    """Issue 41, item 15: Chinese in UTF-16 has few NUL bytes; it failed as 'binary content'."""
    path = tmp_path / "合同.txt"
    text = "合同约定租金每月一千元，由承租人于每月五日前支付。\n" * 40
    path.write_bytes(text.encode(encoding))
    doc = read_document(path)
    assert doc.pages[0].text == text and doc.warnings == [f"decoded as {encoding.upper()} (no byte-order mark)"]


def test_nul_bytes_past_the_start_are_dropped_and_said(tmp_path: Path) -> None:
    """Issue 41, item 2: NUL bytes after the first 8 KB passed the binary check and broke Postgres."""
    path = tmp_path / "log.txt"
    path.write_bytes(b"The rent is due monthly. " * 400 + b"\x00\x00Late fees apply.")
    doc = read_document(path)
    assert "\x00" not in doc.pages[0].text and doc.pages[0].text.endswith("Late fees apply.")
    assert doc.warnings == ["2 NUL characters removed"]


def test_form_feeds_are_page_breaks(tmp_path: Path) -> None:
    path = tmp_path / "pages.txt"
    path.write_text("one\fTwo\fthree", encoding="utf-8")
    assert [(p.number, p.text) for p in read_document(path).pages] == [(1, "one"), (2, "Two"), (3, "three")]


def test_unsupported_type(tmp_path: Path) -> None:
    path = tmp_path / "sheet.numbers"
    path.write_bytes(b"PK")
    with pytest.raises(ReadError, match="unsupported file type"):
        read_document(path)


def test_pdf_line_breaks_between_chinese_characters_are_removed() -> None:
    assert clean_pdf_text("甲方应于合同\n签订之日 起十个工作日内") == "甲方应于合同签订之日起十个工作日内"
    assert clean_pdf_text("Hello\nworld") == "Hello\nworld"
    assert clean_pdf_text("termi-\nnation") == "termination"


def test_pdf_words_glued_to_section_numbers_and_enumerators_are_parted() -> None:
    # As PDFium reads headings and clauses whose number the PDF places apart with no space character.
    assert clean_pdf_text("1.1The initial term\n2.2Termination\n7.Notices") == (
        "1.1 The initial term\n2.2 Termination\n7. Notices"
    )
    assert clean_pdf_text("terminate (a)at the option of any party or (ii)During the term") == (
        "terminate (a) at the option of any party or (ii) During the term"
    )
    split = "on the 5 th day of March and the 1 st of June"
    assert clean_pdf_text(split) == "on the 5th day of March and the 1st of June"
    # left as they are: a company named by a number, a year, a plural, (s)he, a decimal inside a line
    unchanged = "3Com Corporation\n2019Annual Report\nthe Party(ies) and (s)he paid 1.5Million"
    assert clean_pdf_text(unchanged) == unchanged


def test_pdf_no_break_and_invisible_characters_become_plain_text() -> None:
    # As PDF text layers give them: a no-break space, a narrow one, a soft hyphen, a zero-width space.
    assert clean_pdf_text("Section\u00a012.1\u202fTermi\u00adnation of the Agree\u200bment") == (
        "Section 12.1 Termination of the Agreement"
    )
    assert clean_pdf_text("第一条\u3000总则") == "第一条\u3000总则"  # the ideographic space is CJK text, kept
