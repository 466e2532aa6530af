"""Running headers and footers left out of a document's pages (ingest.page_furniture), and of what a PDF
made here reads as."""

from __future__ import annotations

from pathlib import Path

from ingest.page_furniture import strip_furniture
from ingest.readers import read_document, read_pdf

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
]


def _body(n: int) -> str:
    """Four lines of a page's own text (real pages do not repeat each other's lines)."""
    return "\n".join(f"The {WORDS[n % 13]} segment's {WORDS[(n + k) % 13]} results, line {k}." for k in range(4))


def _page(n: int, body: str) -> str:
    return f"Table of Contents\nACME Corp 2023 Form 10-K\n{body}\n{_body(n)}\n{n}"


def test_lines_at_the_edges_of_most_pages_are_left_out_whatever_their_page_number() -> None:
    pages = [_page(n, f"The {WORDS[n % 13]} page: revenue, costs and risks.") for n in range(40, 50)]
    out, removed = strip_furniture(pages)
    assert removed == 30  # three a page: the link, the running title, the page number
    assert all(not text.startswith("Table of Contents") and "Form 10-K" not in text for text in out)
    assert out[0] == f"The bravo page: revenue, costs and risks.\n{_body(40)}"


def test_a_short_document_or_lines_on_few_pages_are_kept() -> None:
    pages = [_page(n, "Body.") for n in range(1, 4)]
    assert strip_furniture(pages) == (pages, 0)  # three pages tell no running header from content
    varied = [
        f"Heading {WORDS[n]}\n{_body(n)}\n{_body(n + 1)}\n{'Total 12' if n < 3 else WORDS[n]}" for n in range(1, 11)
    ]
    out, removed = strip_furniture(varied)  # "Total 12" at the foot of 2 of 10 pages is content
    assert removed == 0 and out == varied


def test_a_pdf_and_an_html_filing_lose_their_running_footers(tmp_path: Path) -> None:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    path = tmp_path / "report.pdf"
    pdf = canvas.Canvas(str(path), pagesize=letter)
    for n in range(1, 7):
        pdf.setFont("Helvetica", 10)
        pdf.drawString(72, 740, "Northwind Robotics | Annual Report 2025")
        pdf.drawString(72, 700, f"Section {WORDS[n]} discusses shipments.")
        for k, line in enumerate([*_body(n).splitlines(), *_body(n + 5).splitlines()]):
            pdf.drawString(72, 680 - 14 * k, line)
        pdf.drawString(300, 40, f"Page {n} of 6")
        pdf.showPage()
    pdf.save()
    third = read_pdf(path).pages[2].text
    assert third.startswith("Section delta discusses") and "Northwind Robotics |" not in third
    assert "Page 3" not in third and _body(3).splitlines()[-1] in third
    html = tmp_path / "filing.htm"
    html.write_text(
        "<html><body>"
        + "".join(
            f"<p>Item {n}. The {WORDS[n]} part of the filing.</p>"
            + "".join(f"<p>{line}</p>" for line in [*_body(n).splitlines(), *_body(n + 5).splitlines()])
            + f'<p>{n}</p><p><a href="#toc">Table of Contents</a></p><hr style="page-break-after:always">'
            for n in range(1, 7)
        )
        + "</body></html>"
    )
    read = read_document(html).pages
    assert len(read) == 6 and read[3].text.startswith("Item 4. The echo part of the filing.")
    assert "Table of Contents" not in read[3].text and not read[3].text.endswith("\n\n4")
