"""OpenDocument (.odt, .ods, .odp; ingest.formats.odf_reader): pages where LibreOffice laid them out or a style
breaks them, each sheet and each slide a page, headings and labelled rows as the Office readers write them; a
saved sheet's million empty repeated rows cost nothing; hostile packages fail alone. Files made by the tests
(tests/support/odf_factory.py)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from docqa.core.errors import ReadError
from ingest.isolation import read_pdf_isolated
from ingest.readers import read_document
from tests.support import odf_factory


def test_a_text_documents_pages_follow_its_soft_and_hard_breaks(tmp_path: Path) -> None:
    doc = read_document(odf_factory.odt_file(tmp_path / "msa.odt"))
    first, second, third = (p.text for p in doc.pages)
    assert first.startswith("# Master Services Agreement\n\nThe Supplier shall deliver monthly.")
    assert "a footnote" not in first and "Fees are due in 30 days." in first and "## Liability" in first
    assert second.startswith("Liability is capped at twice the annual fees.")  # the page it ends on
    assert "Service | Fee (EUR)\nHosting | 12,000" in second
    assert third == "Schedule 1: the governing law is that of Portugal."


def test_each_sheet_is_a_page_and_empty_repeats_are_not_expanded(tmp_path: Path) -> None:
    doc = read_document(odf_factory.ods_file(tmp_path / "model.ods"))
    assert [p.text for p in doc.pages] == [
        "## Sheet: Revenue\n\nYear | Revenue\n2023 | 4,120",
        "## Sheet: Assumptions\n\nGrowth | 3%\nGrowth | 3%\nGrowth | 3%",
    ]


def test_each_slide_is_a_page_with_its_title_text_table_and_notes_as_powerpoints_are(tmp_path: Path) -> None:
    doc = read_document(odf_factory.odp_file(tmp_path / "board.odp"))
    assert [p.text for p in doc.pages] == [
        "## Q3 review\n\nBrno shipped 2,340 robots.\n\nNotes: Say the Graz figure too.",
        "Plant | Units\nGraz | 1,105",
    ]


def test_hostile_or_broken_packages_fail_alone_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "fake.odt").write_bytes(b"not a zip at all")
    with pytest.raises(ReadError, match="not a valid OpenDocument text file"):
        read_pdf_isolated(tmp_path / "fake.odt", None, timeout_s=60, memory_mb=1024)
    entities = '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    laughs = tmp_path / "laughs.odt"
    with zipfile.ZipFile(laughs, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        package.writestr("content.xml", f'<?xml version="1.0"?>{entities}<r>&b;</r>')
    with pytest.raises(ReadError, match="OpenDocument text"):
        read_document(laughs)
    no_content = tmp_path / "empty.ods"
    with zipfile.ZipFile(no_content, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
    with pytest.raises(ReadError, match="not a readable OpenDocument spreadsheet: KeyError"):
        read_document(no_content)
    made = odf_factory.odt_file(tmp_path / "msa.odt")
    assert len(read_pdf_isolated(made, None, timeout_s=60, memory_mb=1024).pages) == 3  # still serving


def test_repeat_counts_a_file_inflates_are_bounded(tmp_path: Path) -> None:
    """A sheet cell repeated a billion times, a run of a billion spaces, a level that is no number."""
    body = (
        '<office:spreadsheet><table:table table:name="S"><table:table-row>'
        '<table:table-cell table:number-columns-repeated="999999999"><text:p>x<text:s text:c="999999999"/>y'
        "</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>"
    )
    doc = read_pdf_isolated(odf_factory.odf_file(tmp_path / "big.ods", body), None, timeout_s=60, memory_mb=1024)
    [page] = doc.pages
    assert page.text.splitlines()[2] == "x y"  # repeats of one value read as a merged cell's
    assert doc.warnings == ["read up to 2,000,000 cells: sheet 'S' cut, later sheets left out"]
    odt = odf_factory.odf_file(
        tmp_path / "odd.odt", '<office:text><text:h text:outline-level="x">Title</text:h></office:text>'
    )
    assert read_document(odt).pages[0].text == "# Title"


def test_a_deck_of_titles_is_read_and_a_file_of_empty_sheets_is_not(tmp_path: Path) -> None:
    title = '<draw:frame presentation:class="title"><draw:text-box><text:p>{}</text:p></draw:text-box></draw:frame>'
    slides = "".join(f"<draw:page>{title.format(t)}</draw:page>" for t in ("Agenda", "Results"))
    deck = odf_factory.odf_file(tmp_path / "titles.odp", f"<office:presentation>{slides}</office:presentation>")
    assert [p.text for p in read_document(deck).pages] == ["## Agenda", "## Results"]
    empty = '<office:spreadsheet><table:table table:name="Blank"><table:table-row>'
    empty += (
        '<table:table-cell table:number-columns-repeated="5"/></table:table-row></table:table></office:spreadsheet>'
    )
    with pytest.raises(ReadError, match="the OpenDocument spreadsheet has no text"):
        read_document(odf_factory.odf_file(tmp_path / "blank.ods", empty))
