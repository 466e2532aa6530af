"""CSV and TSV (ingest.formats.csv_reader): rows as labelled lines in pages that each repeat the header row and
say which rows they hold; delimiters sniffed, legacy encodings decoded as text files are; a broken table fails
alone with its reason; an ingested export answers a question about a row far from its header."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docqa.core.errors import ReadError
from docqa.service import DocQA
from ingest.formats import csv_reader
from ingest.formats.csv_reader import read_table_text
from ingest.formats.text_units import row_line
from ingest.isolation import read_pdf_isolated
from ingest.readers import read_document
from tests.support.paths import make_settings


def _export(rows: int) -> str:
    lines = ["Region,Quarter,Revenue (EUR k),Notes"]
    lines += [f"R{n:04d},Q{n % 4 + 1},{1000 + n},plain" for n in range(1, rows + 1)]
    return "\n".join(lines) + "\n"


def test_every_page_repeats_the_header_and_names_its_rows() -> None:
    doc = read_table_text(_export(250), "sales.csv")
    assert [p.number for p in doc.pages] == [1, 2, 3]
    first, _, last = (p.text.splitlines() for p in doc.pages)
    assert first[0] == "## Table: sales.csv (rows 2-101 of 251)"
    assert last[0] == "## Table: sales.csv (rows 202-251 of 251)"
    for page in (first, last):
        assert page[2] == "Region | Quarter | Revenue (EUR k) | Notes"
    assert last[3] == "R0201 | Q2 | 1201 | plain" and last[-1] == "R0250 | Q3 | 1250 | plain"
    assert sum(len(p.text.splitlines()) - 3 for p in doc.pages) == 250  # every row once
    assert doc.warnings == []


def test_quoted_cells_keep_their_commas_and_line_breaks_and_semicolons_are_sniffed() -> None:
    text = 'Clause;Party;Text\n4.2;"Acme; Ltd.";"Notice of 30 days,\nin writing"\n'
    doc = read_table_text(text, "clauses.csv")
    lines = doc.pages[0].text.splitlines()
    assert lines[2] == "Clause | Party | Text"
    assert lines[3] == "4.2 | Acme; Ltd. | Notice of 30 days, in writing"


def test_a_tsv_is_split_on_tabs_even_where_its_cells_hold_commas() -> None:
    doc = read_table_text("Name\tAmount\nSmith, J.\t1,200\n", "payees.tsv", tab_separated=True)
    assert doc.pages[0].text.splitlines()[2:] == ["Name | Amount", "Smith, J. | 1,200"]


def test_a_header_only_table_is_one_page_and_an_empty_one_an_error() -> None:
    assert read_table_text("a,b,c\n", "x.csv").pages[0].text.endswith("(header row only)\n\na | b | c")
    with pytest.raises(ReadError, match="no values"):
        read_table_text(",,\n\n , \n", "blank.csv")


def test_a_table_past_its_cell_budget_is_cut_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csv_reader, "MAX_CELLS", 40)
    doc = read_table_text(_export(100), "big.csv")
    assert sum(len(p.text.splitlines()) - 3 for p in doc.pages) == 9  # 10 rows of 4 cells, the header's among them
    assert doc.warnings == ["read up to 40 cells: the rows after row 10 left out"]


def test_a_cell_past_the_field_limit_fails_the_file_with_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csv_reader, "MAX_FIELD_CHARS", 1000)
    with pytest.raises(ReadError, match=r"not a readable table: a cell in row 3 is over 1,000 characters"):
        read_table_text("a,b\n1,2\n3," + "x" * 2000 + "\n", "long.csv")


def test_a_gb18030_export_is_decoded_and_read_in_the_isolated_reader(tmp_path: Path) -> None:
    path = tmp_path / "合同台账.csv"
    path.write_bytes("合同编号,对方,金额（万元）\nHT-2023-017,华东设备有限公司,1250\n".encode("gb18030"))
    inline = read_document(path)
    assert inline.pages[0].text.splitlines()[3] == "HT-2023-017 | 华东设备有限公司 | 1250"
    isolated = read_pdf_isolated(path, None, timeout_s=60, memory_mb=1024)
    assert [p.text for p in isolated.pages] == [p.text for p in inline.pages]


def test_an_ingested_export_answers_about_a_row_far_from_its_header(tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    rows = ["Customer,Country,Contract end,Annual fee"]
    rows += [f"Customer {n},Country {n % 7},2027-0{n % 9 + 1}-15,{n * 10}" for n in range(1, 400)]
    rows[333] = "Zephyrine Logistics,Portugal,2029-11-30,48200"
    (folder / "renewals.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "broken.csv").write_bytes(b"a,b\n1,2\n\x00\x00" + b"\xff" * 50)
    qa = DocQA(make_settings(tmp_path / "data"), None, None)
    try:
        report: dict[str, Any] = qa.ingest([folder]).as_dict()
        assert report["added"] == 1, report
        [failed] = report["failed"]
        assert failed["path"] == "broken.csv" and "not a text file" in failed["error"]
        [doc] = [d for d in qa.documents() if d.name == "renewals.csv"]
        assert doc.pages == 4
        [hit] = qa.retrieve("When does the Zephyrine Logistics contract end?", 1)
        assert hit.document_name == "renewals.csv" and hit.first_page <= 4 <= hit.last_page
        page_four = hit.text[hit.text.index("## Table: renewals.csv (rows 302-400 of 400)") :]
        assert "Customer | Country | Contract end | Annual fee" in page_four  # the header, again, on that page
        assert "Zephyrine Logistics | Portugal | 2029-11-30 | 48200" in page_four
    finally:
        qa.store.close()


def test_a_cells_own_line_breaks_keep_its_row_on_one_line() -> None:
    """Excel's Alt+Enter, an HTML cell's source lines: the row's label stays beside its figure."""
    assert row_line(["Revenue\n(restated)", "\n 1,200\n", ""]) == "Revenue (restated) | 1,200"


def test_a_header_repeated_past_the_bound_is_refused_in_the_reading_child(tmp_path: Path) -> None:
    """A 250 KB CSV whose 220,000-character header heads each of its 30 pages is 6.6 million characters:
    refused by the child that read it (issue 60, item 6), not sent to the server to be refused there; the
    next file is read as usual."""
    path = tmp_path / "wide.csv"
    header = ",".join(f"column {n} " + "x" * 44_000 for n in range(5))
    path.write_text(header + "\n" + "\n".join(f"{n},1,2,3,4" for n in range(3_000)) + "\n")
    with pytest.raises(ReadError, match=r"6,6\d\d,\d{3} characters of text, over the 5,000,000 limit"):
        read_pdf_isolated(path, None, timeout_s=60, memory_mb=1024)
    with pytest.raises(ReadError, match=r"over the 1,000,000 limit"):
        read_pdf_isolated(path, None, timeout_s=60, memory_mb=1024, max_chars=1_000_000)
    small = tmp_path / "small.csv"
    small.write_text("a,b\n1,2\n")
    assert read_pdf_isolated(small, None, timeout_s=60, memory_mb=1024).pages[0].text.endswith("1 | 2")
