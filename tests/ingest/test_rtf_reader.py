"""Rich Text Format (ingest.formats.rtf_reader): pages at explicit page breaks, table rows as labelled lines,
code pages and Unicode escapes decoded, pictures left out; a file that is no RTF fails alone. The RTF is
written by the tests (no blobs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.core.errors import ReadError
from ingest.isolation import read_pdf_isolated
from ingest.readers import read_document

CONTRACT = (
    r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Times New Roman;}}"
    r"{\pard\b LEASE AGREEMENT\b0\par}"
    r"{\pard The Tenant pays rent monthly.\par}"
    r"{\*\shppict{\pict\pngblip 89504e470d0a1a0a0000}}"
    r"\trowd\cellx2000\cellx4000 Year\cell Rent (EUR)\cell\row"
    r"\trowd\cellx2000\cellx4000 2024\cell 18,000\cell\row"
    r"\pard\pagebb The paragraph that asks for a new page.\par"
    r"\page{\pard Schedule 1: caf\'e9 fixtures, \u8364? 3,400 of them.\par}}"
)


def test_pages_follow_explicit_breaks_and_table_rows_keep_their_labels(tmp_path: Path) -> None:
    path = tmp_path / "lease.rtf"
    path.write_bytes(CONTRACT.encode("ascii"))
    doc = read_document(path)
    first, second = (p.text for p in doc.pages)
    assert first.startswith("LEASE AGREEMENT\nThe Tenant pays rent monthly.")
    assert "Year | Rent (EUR)\n2024 | 18,000" in first and "89504e" not in first
    assert second == "Schedule 1: café fixtures, € 3,400 of them."


def test_a_chinese_rtf_in_its_code_page_reads_right_in_the_isolated_reader(tmp_path: Path) -> None:
    text = "甲方应于合同签订之日起十个工作日内付款。"
    escaped = "".join(f"\\'{b:02x}" for b in text.encode("gbk"))
    path = tmp_path / "合同.rtf"
    path.write_bytes(("{\\rtf1\\ansi\\ansicpg936 {\\pard " + escaped + "\\par}}").encode("ascii"))
    doc = read_pdf_isolated(path, None, timeout_s=60, memory_mb=1024)
    assert doc.pages[0].text == text


def test_a_file_that_is_no_rtf_fails_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "memo.rtf"
    path.write_text("Dear all, plain text in disguise.", encoding="utf-8")
    with pytest.raises(ReadError, match=r"not an RTF file"):
        read_document(path)
    empty = tmp_path / "empty.rtf"
    empty.write_bytes(rb"{\rtf1\ansi {\*\generator Writer;}}")
    with pytest.raises(ReadError, match="has no text"):
        read_document(empty)
