"""Word, Excel, PowerPoint and HTML (ingest.formats): read with the unit a citation names as their page,
headings as headings, tables as labelled rows; hostile variants fail alone, in the isolated reader, and a
mixed folder is ingested with each file's pages searchable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docqa.core.errors import ReadError
from docqa.service import DocQA
from docqa.store.keyword.passage_stems import heading_texts
from ingest.isolation import read_pdf_isolated
from ingest.readers import read_document
from tests.support import office_factory
from tests.support.paths import make_settings


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("formats")
    return {
        "docx": office_factory.docx_file(folder / "msa.docx"),
        "xlsx": office_factory.xlsx_file(folder / "model.xlsx"),
        "pptx": office_factory.pptx_file(folder / "board.pptx"),
        "html": office_factory.html_file(folder / "annual-report.htm"),
    }


def test_word_pages_follow_its_page_breaks_with_headings_and_table_rows(files: dict[str, Path]) -> None:
    doc = read_document(files["docx"])
    assert [p.number for p in doc.pages] == [1, 2]
    first, second = (p.text for p in doc.pages)
    assert first.startswith("# Master Services Agreement") and "# Fees" in first
    assert "Hosting | 12,000 | 14,500" in first.splitlines()  # a figure keeps its row's label
    assert heading_texts(second)[0] == "Termination" and "ninety days" in second and "ninety" not in first


def test_each_sheet_is_a_page_named_with_its_range_and_rows_keep_their_labels(files: dict[str, Path]) -> None:
    doc = read_document(files["xlsx"])
    assert [p.number for p in doc.pages] == [1, 2]
    revenue, assumptions = (p.text.splitlines() for p in doc.pages)
    assert revenue[0] == "## Sheet: Revenue (A1:C3)" and "Robotics | 184.6 | 201.25" in revenue
    assert "Services | 40 | 52" in revenue  # whole numbers without ".0"
    assert assumptions[0] == "## Sheet: Assumptions (A1:B2)" and "Discount rate | 0.085" in assumptions


def test_each_slide_is_a_page_with_its_title_table_and_notes(files: dict[str, Path]) -> None:
    doc = read_document(files["pptx"])
    assert [p.number for p in doc.pages] == [1, 2]
    assert doc.pages[0].text.splitlines()[0] == "## Board Update Q3" and "Northwind Robotics" in doc.pages[0].text
    second = doc.pages[1].text
    assert heading_texts(second)[0] == "Shipments by Plant" and "Brno | 2,340" in second.splitlines()
    assert "Notes: Brno doubled its output" in second


def test_html_pages_are_its_printed_pages_without_hidden_text(files: dict[str, Path]) -> None:
    doc = read_document(files["html"])
    assert [p.number for p in doc.pages] == [1, 2, 3]
    first, second, third = (p.text for p in doc.pages)
    assert "The company designs warehouse robots. It sells them worldwide." in first  # source newlines, &#160;
    assert "hidden" not in first and "script" not in first and "color" not in first
    assert heading_texts(second)[0] == "Item 7. Liquidity and Capital Resources"
    assert "Cash and equivalents | 1,577" in second.splitlines()
    assert third.startswith("## Item 8. Financial Statements") and "5,363" in third


def test_the_isolated_reader_reads_each_format_as_in_process(files: dict[str, Path]) -> None:
    for path in files.values():
        assert read_pdf_isolated(path, None, timeout_s=60, memory_mb=1024) == read_document(path), path.name


def test_hostile_packages_fail_alone_with_their_reason(files: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ReadError, match=r"inflates .*x .*compression bomb"):
        read_pdf_isolated(office_factory.zip_bomb(tmp_path / "bomb.docx"), None, timeout_s=60, memory_mb=1024)
    entities = office_factory.entity_bomb_docx(tmp_path / "laughs.docx", files["docx"])
    with pytest.raises(ReadError, match=r"entity amplification|memory limit|not a readable Word"):
        read_pdf_isolated(entities, None, timeout_s=60, memory_mb=1024)
    (tmp_path / "fake.xlsx").write_bytes(b"name,value\nrevenue,1\n")
    with pytest.raises(ReadError, match=r"not a valid Excel file \(not a ZIP package"):
        read_pdf_isolated(tmp_path / "fake.xlsx", None, timeout_s=60, memory_mb=1024)
    (tmp_path / "deck.pptx").write_bytes((tmp_path / "bomb.docx").read_bytes()[:5000])  # cut short
    with pytest.raises(ReadError, match=r"PowerPoint"):
        read_pdf_isolated(tmp_path / "deck.pptx", None, timeout_s=60, memory_mb=1024)
    deep = office_factory.deep_html(tmp_path / "deep.html")  # 5,000 <div>s: structure, not formatting
    with pytest.raises(ReadError, match=r"nests deeper than 2,048 elements.*would be lost, so the file is not added"):
        read_pdf_isolated(deep, None, timeout_s=60, memory_mb=1024)
    assert len(read_pdf_isolated(files["xlsx"], None, timeout_s=60, memory_mb=1024).pages) == 2  # still serving


def test_a_mixed_folder_is_ingested_and_each_unit_is_found(files: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    for path in files.values():
        (folder / path.name).write_bytes(path.read_bytes())
    office_factory.zip_bomb(folder / "broken.docx")
    qa = DocQA(make_settings(tmp_path / "data"), None, None)
    try:
        report: dict[str, Any] = qa.ingest([folder]).as_dict()
        assert report["added"] == 4, report
        [failed] = report["failed"]
        assert failed["path"] == "broken.docx" and "compression bomb" in failed["error"]
        pages = {d.name: d.pages for d in qa.documents()}
        titles = {d.name: json.loads(d.catalog or "{}").get("title") for d in qa.documents()}
        # the title a file declares names it (issue 62 item 11): Word's property, a deck's first slide's title
        assert titles["msa.docx"] == "MSA with Acme GmbH" and titles["board.pptx"] == "Board Update Q3"
        assert pages == {"msa.docx": 2, "model.xlsx": 2, "board.pptx": 2, "annual-report.htm": 3, "broken.docx": 0}
        [hit] = qa.retrieve("What is the terminal growth assumption?", 1)
        assert hit.document_name == "model.xlsx" and (hit.first_page, hit.last_page) == (1, 2)  # one small chunk
        [(offset, page)] = hit.page_breaks  # where the Assumptions sheet (page 2, as citations name it) starts
        assert page == 2 and hit.text[offset:].lstrip().startswith("## Sheet: Assumptions")
        [hit] = qa.retrieve("How many robots did the Brno plant ship?", 1)
        assert hit.document_name == "board.pptx" and "Brno | 2,340" in hit.text
    finally:
        qa.store.close()


@pytest.mark.parametrize(
    ("head", "text", "encoding"),
    [
        ("", "Café fees: € 1,200; 甲方应于合同签订之日起付款。", "utf-8"),  # no charset: lxml alone read Latin-1
        ("", "甲方应于合同签订之日起十个工作日内付款，逾期按日万分之五支付违约金。", "gb18030"),  # detected
        ('<meta charset="iso-8859-1">', "Café, façade, naïve", "iso-8859-1"),  # as declared
    ],
)
def test_html_is_read_in_the_encoding_it_declares_or_else_the_one_its_bytes_are_in(
    tmp_path: Path, head: str, text: str, encoding: str
) -> None:
    path = tmp_path / "page.html"
    path.write_bytes(f"<html><head>{head}</head><body><p>{text}</p></body></html>".encode(encoding))
    assert read_document(path).pages[0].text == text


@pytest.mark.parametrize(("unclosed", "warned"), [(400, False), (3_000, True)])
def test_html_nested_deep_by_unclosed_tags_loses_no_text(tmp_path: Path, unclosed: int, warned: bool) -> None:
    """Old filings leave <font> tags unclosed: 400 of them nest 400 deep, and libxml2 cut everything past its
    256th element, silently ("added", clauses 255-400 gone). Now read whole; past 2,048 deep, read without the
    inline tags, saying so."""
    path = tmp_path / "filing.htm"
    clauses = "".join(f"<font size=2>Clause {n}. " for n in range(1, unclosed + 1))
    path.write_text(f"<html><body><p>{clauses}</p></body></html>")
    doc = read_pdf_isolated(path, None, timeout_s=60, memory_mb=1024)
    text = " ".join(page.text for page in doc.pages)
    assert f"Clause {unclosed}." in text and "Clause 300." in text
    assert any("nests deeper" in w for w in doc.warnings) == warned


def test_an_html_page_is_named_by_its_title(tmp_path: Path) -> None:
    page = tmp_path / "lease.html"
    page.write_text("<html><head><title>  Lease for\n 12 Main St </title></head><body><p>Rent is due monthly.</p>")
    assert read_document(page).title == "Lease for 12 Main St"
    page.write_text("<html><body><p>No title here.</p></body></html>")
    assert read_document(page).title is None
