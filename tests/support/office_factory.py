"""Word, Excel, PowerPoint and HTML files made by the tests with the libraries that write them (no blobs), and
their hostile variants."""

from __future__ import annotations

import zipfile
from pathlib import Path


def docx_file(path: Path) -> Path:
    """Two pages (an explicit page break): a title, a heading, a paragraph, a table, then a second section."""
    import docx
    from docx.enum.text import WD_BREAK

    document = docx.Document()
    document.core_properties.title = "MSA with Acme GmbH"  # File > Properties > Title: the document's name
    document.add_heading("Master Services Agreement", level=0)
    document.add_heading("Fees", level=1)
    document.add_paragraph("The Customer pays the fees below within thirty days of each invoice.")
    table = document.add_table(rows=2, cols=3)
    for row, cells in zip(table.rows, [("Service", "2025", "2026"), ("Hosting", "12,000", "14,500")], strict=True):
        for cell, value in zip(row.cells, cells, strict=True):
            cell.text = value
    document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    document.add_heading("Termination", level=1)
    document.add_paragraph("Either party may terminate on ninety days written notice.")
    document.save(str(path))
    return path


def xlsx_file(path: Path) -> Path:
    """Two sheets: a model's revenue rows with labels, and assumptions."""
    import openpyxl

    book = openpyxl.Workbook()
    revenue = book.active
    assert revenue is not None
    revenue.title = "Revenue"
    for row in [("Segment", "FY2024", "FY2025"), ("Robotics", 184.6, 201.25), ("Services", 40, 52)]:
        revenue.append(row)
    assumptions = book.create_sheet("Assumptions")
    assumptions.append(("Discount rate", 0.085))
    assumptions.append(("Terminal growth", 0.02))
    book.save(str(path))
    return path


def pptx_file(path: Path) -> Path:
    """Two slides: a title slide, and a slide with a title, a bullet, a table and speaker notes."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "Board Update Q3"
    first.placeholders[1].text = "Northwind Robotics"
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Shipments by Plant"
    shape = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(1))
    for (r, c), value in {(0, 0): "Plant", (0, 1): "Robots", (1, 0): "Brno", (1, 1): "2,340"}.items():
        shape.table.cell(r, c).text = value
    second.notes_slide.notes_text_frame.text = "Brno doubled its output after the line upgrade."
    deck.save(str(path))
    return path


HTML = """<!DOCTYPE html><html><head><title>10-K</title><style>p {color: red}</style>
<script>var hidden = "script text";</script></head><body>
<div style="display:none"><p>hidden inline XBRL facts</p></div>
<h1>Annual Report</h1>
<p>The company designs
   warehouse robots.&#160;It sells them worldwide.</p>
<hr style="page-break-after: always"/>
<h2>Item 7. Liquidity and Capital Resources</h2>
<table><tr><th>Item</th><th>2025</th></tr><tr><td>Cash and equivalents</td><td>1,577</td></tr></table>
<div style="page-break-before:always"><h2>Item 8. Financial Statements</h2><p>Net income was 5,363.</p></div>
</body></html>"""


def html_file(path: Path) -> Path:
    """Three printed pages, as EDGAR marks them; a hidden block and a script that must not be read."""
    path.write_text(HTML, encoding="utf-8")
    return path


def zip_bomb(path: Path, inflated_mib: int = 200) -> Path:
    """A .docx-named ZIP whose one part inflates from about a megabyte to inflated_mib MiB of zeros."""
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package,
        package.open("word/document.xml", "w", force_zip64=True) as part,
    ):
        block = b"\0" * (1 << 20)
        for _ in range(inflated_mib):
            part.write(block)
    return path


def entity_bomb_docx(path: Path, good: Path) -> Path:
    """A real .docx whose document part declares nested entities ("billion laughs")."""
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY a "aaaaaaaaaa">'
        + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(8))
        + ']><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r>'
        "<w:t>&i;</w:t></w:r></w:p></w:body></w:document>"
    )
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = bomb.encode() if item.filename == "word/document.xml" else source.read(item.filename)
            target.writestr(item, data)
    return path


def deep_html(path: Path, depth: int = 5_000) -> Path:
    """HTML nested deeper than any recursive walk could follow."""
    path.write_text("<html><body>" + "<div>" * depth + "deep text" + "</div>" * depth + "</body></html>")
    return path
