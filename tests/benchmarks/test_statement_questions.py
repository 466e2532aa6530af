"""The financial-statement question set's labels (bench/statement_questions.py): a statement's page is a table
headed by its title, not the contents page that lists it, nor MD&A's selected data, nor a title run into a
sentence: pure logic on pages written here."""

from __future__ import annotations

from pathlib import Path

from bench.section_questions import Filing
from bench.statement_questions import rows_for, statement_pages
from bench.statement_templates import MENDED_ON

FIGURES = "\n".join(f"Line item {n} $ {n},{n:03d} $ {n + 1},{n:03d}" for n in range(1, 25))
PAGES = [
    "FORM 10-K\nAcme Corp",  # 1
    "Table of Contents\nConsolidated Statements of Income 5\nConsolidated Balance Sheets 6",  # 2
    "Table of Contents\nItem 8. Financial Statements\nConsolidated Statements of Income 5\n"
    "Consolidated Balance Sheets 6\nConsolidated Statements of Cash Flows 7\n" + FIGURES,  # 3: a contents page
    "Selected Financial Data\nConsolidated Statements of Operations Data:\n" + FIGURES,  # 4: Item 6
    "ACME CORP\nCONSOLIDATED STATEMENTS OF INCOME\n(In millions)\n" + FIGURES,  # 5
    "Consolidated Balance Sheets Acme Corp and Subsidiaries\n" + FIGURES,  # 6
    "Consolidated\nStatements\nof\nCash\nFlows\n" + FIGURES,  # 7: a word on each line
    "Consolidated\nStatements\nof\nCash\nFlows\n(continued)\n" + FIGURES,  # 8: the same document's style
    "Notes\nAs shown in the Consolidated Balance Sheets, cash rose.",  # 9
]


def filing() -> Filing:
    return Filing(Path("/docs/pdf/ACME_2020_10K.pdf"), "Acme", "FY2020", "10-K", PAGES)


def test_each_statement_is_the_table_its_title_heads_and_goes_on_to_the_next_page_under_that_title() -> None:
    found = filing()
    assert statement_pages(found, "income_statement") == [5]
    assert statement_pages(found, "balance_sheet") == [6]
    assert statement_pages(found, "cash_flow_statement") == [7, 8]


def test_a_filing_without_a_statement_gives_no_question_about_it() -> None:
    pages = [*PAGES[:5], *PAGES[8:]]
    rows, missing = rows_for(Filing(Path("/docs/pdf/ACME_2020_10K.pdf"), "Acme", "FY2020", "10-K", pages),
                             Path("/docs"), MENDED_ON)  # fmt: skip
    assert missing == ["balance_sheet", "cash_flow_statement"]
    assert {r["category"] for r in rows} == {"income_statement"} and len(rows) == len(MENDED_ON["income_statement"])
    assert rows[0]["answers"] == [{"text": "", "pages_found": [5]}] and "Acme" in str(rows[0]["question"])
