"""Words a PDF's layout split in two, joined by the document's own vocabulary (ingest.split_words); on a PDF
made here with a heading whose last glyph is set apart, as 3M's 10-K sets "Balance Shee t"."""

from __future__ import annotations

from pathlib import Path

from ingest.readers import read_pdf
from ingest.split_words import join_split_words

BODY = "The balance sheet shows total equity. Net income rose. The business grew; its properties were sold.\n"


def test_split_words_are_joined_where_the_document_writes_them_whole() -> None:
    pages = [
        "Consolidated Balance Shee t\nConsolidated Statement of Incom e\nChanges in Equit y\nItem 1. Busines s.\n",
        BODY * 2,
        "FINANCIAL CONDITION AND LIQUIDI TY\nliquidity and liquidity\n",
    ]
    out, joined = join_split_words(pages)
    assert out[0].splitlines() == [
        "Consolidated Balance Sheet",
        "Consolidated Statement of Income",
        "Changes in Equity",
        "Item 1. Business.",
    ]
    assert out[2].startswith("FINANCIAL CONDITION AND LIQUIDITY") and joined == 5
    assert out[1] == BODY * 2  # the rest as it was


def test_words_that_are_words_stay_apart() -> None:
    pages = [
        "It was used by the plan. See Part I and Exhibit A.\n",  # "usedby" never written; a name and its letter
        "El Plan y la oferta. Legal Proceeding s and one proceeding.\n",  # the fragment stands alone elsewhere
        "The plany of the plany.\n",  # "Plan y" is joinable by the words alone, but "plan" stands alone
        "Unknown wor d.\n",  # never written whole: left as the PDF has it
    ]
    out, joined = join_split_words(pages)
    assert out == pages and joined == 0


def test_small_capitals_set_apart_from_their_first_letter_are_joined() -> None:
    pages = [
        "MGM R ESORTS I NTERNATIONAL\n(Exact name of Registrant)\nR EPORT OF A RRIGO\n",
        "MGM Resorts International files this report. Resorts and International markets. A report.\n",
        "See A NOTHER section.\n",  # "another" is never written whole here: stays
    ]
    out, joined = join_split_words(pages)
    assert out[0].splitlines()[0] == "MGM RESORTS INTERNATIONAL"
    assert out[0].splitlines()[2] == "REPORT OF A RRIGO"  # a name never written whole stays as it is
    assert out[1:] == pages[1:] and joined == 3


def test_a_pdf_heading_with_its_last_glyph_apart_is_read_whole(tmp_path: Path) -> None:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    path = tmp_path / "filing.pdf"
    pdf = canvas.Canvas(str(path), pagesize=letter)
    pdf.setFont("Helvetica-Bold", 13)
    head = "Consolidated Balance Shee"
    pdf.drawString(72, 700, head)
    pdf.drawString(72 + pdf.stringWidth(head, "Helvetica-Bold", 13) + 2.0, 700, "t")  # set apart, as 3M's is
    pdf.setFont("Helvetica", 10)
    for n, line in enumerate(["The balance sheet lists assets.", "A sheet of figures: the balance sheet."]):
        pdf.drawString(72, 660 - 14 * n, line)
    pdf.save()
    text = read_pdf(path).pages[0].text
    assert "Consolidated Balance Sheet" in text and "Shee t" not in text
