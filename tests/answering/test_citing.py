"""Citation refinement: the best page of a multi-page chunk, and which sources an answer cites."""

from __future__ import annotations

from docqa.answering.citing import (
    best_page,
    cited_numbers,
    format_pages,
    page_segments,
    section_of,
    with_page_markers,
)
from docqa.core.types import RetrievedChunk

TEXT = "Annual report.\n\nRevenue was EUR 184.6 million.\n\nWe shipped 2,340 robots from Brno."
CHUNK = RetrievedChunk(1, 1, "r.pdf", 0, TEXT, 1, 3, 1.0, page_breaks=((16, 2), (49, 3)))


def test_page_segments_and_markers() -> None:
    assert [p for p, _ in page_segments(CHUNK)] == [1, 2, 3]
    assert page_segments(CHUNK)[1][1].startswith("Revenue")
    marked = with_page_markers(CHUNK)
    assert marked.index("[page 2]") < marked.index("Revenue") < marked.index("[page 3]") < marked.index("robots")


def test_best_page_follows_the_answer() -> None:
    assert best_page("The revenue was EUR 184.6 million [1].", CHUNK) == 2
    assert best_page("2,340 robots were shipped from Brno.", CHUNK) == 3
    assert best_page("I cannot tell.", CHUNK) is None
    single = RetrievedChunk(2, 1, "a.txt", 0, "text", 4, 4, 1.0)
    assert best_page("anything", single) == 4


def test_cited_numbers() -> None:
    assert cited_numbers("Sixty days [2]. Also [1][3], and [1, 2] or [4，5]; not [x] or 2.") == {1, 2, 3, 4, 5}
    assert cited_numbers("no citations here") == set()


STATEMENTS = (
    "Item 8. Financial Statements\nConsolidated Balance Sheets\nTotal assets 36,500\n"
    "Consolidated Statements of Cash Flows\nNet income 5,363\nPurchases of property (1,577)\n"
    "Cash at end of year 3,270"
)
STATEMENT_PAGES = RetrievedChunk(3, 1, "10k.pdf", 0, STATEMENTS, 58, 60, 1.0, ((68, 59), (143, 60)), ocr_pages=(60,))


def test_a_citation_names_the_section_over_its_page() -> None:
    assert section_of(STATEMENT_PAGES, 59) == "Consolidated Statements of Cash Flows"  # the page's own heading
    assert section_of(STATEMENT_PAGES, 60) == "Consolidated Statements of Cash Flows"  # carried onto the next
    assert section_of(STATEMENT_PAGES, None) == "Item 8 Financial Statements"  # the range's start, with its item
    assert section_of(RetrievedChunk(4, 1, "a.txt", 0, "no heading here", 1, 1, 1.0), 1) is None


def test_a_quote_is_named_by_the_heading_over_it_not_the_pages_first() -> None:
    text = (
        "Section 9. Liability Cap\n\nNeither party's liability shall exceed the fees paid.\n\n"
        "Section 10. Governing Law\n\nThis Agreement shall be governed by the laws of the State of New York."
    )
    chunk = RetrievedChunk(6, 1, "msa.pdf", 0, text, 10, 10, 1.0)
    assert section_of(chunk, 10) == "Liability Cap"  # the page's first heading, without a quote
    assert section_of(chunk, 10, "This Agreement shall be governed by the laws") == "Governing Law"
    assert section_of(chunk, 10, "Neither party's liability shall exceed") == "Liability Cap"
    assert section_of(chunk, 10, "a quote found nowhere in it") == "Liability Cap"


def test_a_heading_a_pdf_spaced_apart_is_joined_again() -> None:
    def heading(text: str) -> str | None:
        return section_of(RetrievedChunk(5, 1, "10-k.pdf", 0, text, 1, 1, 1.0), 1)

    assert heading("Item 1. Intangible Asset s\n\nThe company holds patents.") == "Item 1 Intangible Assets"
    assert heading("Item 3. Legal Proceeding s\n\nNone.") == "Item 3 Legal Proceedings"
    assert heading("PART I V\n\nItem 15. Exhibits") == "PART IV"
    assert heading("Item 7. Management's Discussion\n\nSales rose.") == "Item 7 Management's Discussion"
    assert heading("ARTICLE I\n\nDefinitions apply.") == "ARTICLE I"


def test_format_pages_shows_section_and_ocr() -> None:
    cited = {"pages": [58, 60], "page": 60, "section": "Consolidated Statements of Cash Flows", "ocr": True}
    assert format_pages(cited) == (
        'p. 60 (chunk covers pp. 58-60), "Consolidated Statements of Cash Flows", read by OCR'
    )
    assert format_pages({"pages": [4, 4]}) == "p. 4"
