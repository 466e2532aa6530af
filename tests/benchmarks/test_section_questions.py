"""The standard-section question set's labels (bench/section_questions.py): item headings found after the
table of contents and in the form's order, references to other items not taken for headings, sub-headings
inside their item, and the legal notes' pages added: pure logic on pages written here."""

from __future__ import annotations

import json
from pathlib import Path

from bench.section_questions import Filing, item_pages, page_recall_by_topic, rows_for, section_pages

TOC = "\n".join(f"Item {n}. {title} {page}" for n, title, page in [
    ("1", "Business", 3), ("1A", "Risk Factors", 5), ("2", "Properties", 7), ("3", "Legal Proceedings", 7),
    ("5", "Market for Registrant's Common Equity", 8), ("7", "Management's Discussion", 9),
])  # fmt: skip
PAGES = [
    "FORM 10-K\nAcme Corp",  # 1: cover
    TOC,  # 2: table of contents
    "Item 1. Business\nWe make anvils.\nCompetition\nWe compete with Roadrunner Inc on price.",  # 3
    "Employees\nWe had 1,200 employees.\nItem 8 of Part II, Financial Statements, says more.",  # 4: a reference
    "Item 1A. Risk Factors\nAnvils may fall.",  # 5
    "More risks.",  # 6
    "Item 2. Properties\nWe own a plant in Ohio.\nItem 3. Legal Proceedings\nSee Note 9.",  # 7
    "Item 5. Market for Registrant's Common Equity\nOur stock trades on the NYSE.",  # 8
    "Item 7. Management's Discussion and Analysis\nLiquidity and Capital Resources\nWe hold cash.",  # 9
    "Item 8. Financial Statements\nNote 9. Commitments and Contingencies\nA suit was filed.",  # 10
    "Item 9A. Controls and Procedures\nEffective.",  # 11
]


def filing() -> Filing:
    return Filing(Path("/docs/pdf/ACME_2020_10K.pdf"), "Acme", "FY2020", "10-K", PAGES)


def test_items_are_found_after_the_contents_in_order_and_references_are_not_headings() -> None:
    items = item_pages(filing())
    assert items == {"1": 3, "1A": 5, "2": 7, "3": 7, "5": 8, "7": 9, "8": 10, "9A": 11}


def test_a_section_runs_to_the_next_items_heading_and_a_sub_heading_stays_in_its_item() -> None:
    found = filing()
    items = item_pages(found)
    assert section_pages(found, "1A", items) == [5, 6, 7]
    assert section_pages(found, "3", items) == [7, 8]
    assert section_pages(found, "1/competition", items) == [3, 4, 5]
    assert section_pages(found, "1/employees|human capital", items) == [4, 5]
    assert section_pages(found, "7/liquidity and capital resources", items) == [9, 10]
    assert section_pages(found, "9A/anything", {}) == []  # an item not found: no question


def test_legal_proceedings_take_the_notes_pages_and_the_questions_name_company_and_period() -> None:
    rows, missing = rows_for(filing(), Path("/docs"))
    legal = next(r for r in rows if r["id"] == "ACME_2020_10K-legal-0")
    assert legal["answers"] == [{"text": "", "pages_found": [7, 8, 10, 11]}]
    assert legal["doc_pdf"] == "pdf/ACME_2020_10K.pdf" and "Acme" in str(legal["question"])
    assert "FY2020" in str(legal["question"]) and missing == ["market_risk"]


def test_page_recall_is_counted_per_topic_and_in_all(tmp_path: Path) -> None:
    details = tmp_path / "d.jsonl"
    ranks = [("legal", 1), ("legal", None), ("risks", 3), ("risks", 4)]
    details.write_text("".join(json.dumps({"category": c, "page_rank": r}) + "\n" for c, r in ranks))
    figures = page_recall_by_topic(details)
    assert figures["legal"] == {"questions": 2, "@1": 0.5, "@3": 0.5, "@5": 0.5}
    assert figures["all"] == {"questions": 4, "@1": 0.25, "@3": 0.5, "@5": 0.75}
