"""Writes sample_docs/annual_report_2025.pdf: a four-page report whose facts sit on known pages,
so tests and the demo can check that citations point to the right page.

usage: python sample_docs/make_report_pdf.py   (needs reportlab; the PDF is committed)
"""

from __future__ import annotations

from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer

PAGES = [
    (
        "Northwind Robotics - Annual Report 2025",
        [
            "This report covers the financial year from 1 January to 31 December 2025. Northwind Robotics "
            "designs and builds autonomous warehouse robots and sells them to logistics companies in Europe "
            "and North America.",
            "Chief Executive Officer: Ingrid Solberg. Headquarters: Rotterdam, the Netherlands.",
        ],
    ),
    (
        "Financial highlights",
        [
            "Revenue for 2025 was EUR 184.6 million, up 23 percent from EUR 150.1 million in 2024.",
            "Operating profit rose to EUR 21.3 million, an operating margin of 11.5 percent.",
            "Free cash flow was EUR 9.8 million. The company ended the year with EUR 64.2 million of cash "
            "and no bank debt.",
        ],
    ),
    (
        "Operations",
        [
            "Northwind shipped 2,340 robots in 2025, against 1,710 in 2024. The new plant in Brno, "
            "Czech Republic, opened in May 2025 and will reach full capacity of 4,000 robots a year in 2027.",
            "Average robot uptime at customer sites was 99.2 percent. Headcount grew from 610 to 782 employees.",
        ],
    ),
    (
        "Risks and outlook",
        [
            "The main risks are the supply of lidar sensors, which come from two suppliers, and currency "
            "movements between the euro and the US dollar.",
            "For 2026 the board expects revenue between EUR 220 million and EUR 235 million and proposes a "
            "dividend of EUR 0.45 per share.",
        ],
    ),
]


def main() -> None:
    out = Path(__file__).with_name("annual_report_2025.pdf")
    styles = getSampleStyleSheet()
    story: list = []
    for i, (title, paragraphs) in enumerate(PAGES):
        story.append(Paragraph(title, styles["Heading1"]))
        for text in paragraphs:
            story.append(Paragraph(text, styles["BodyText"]))
            story.append(Spacer(1, 8))
        if i < len(PAGES) - 1:
            story.append(PageBreak())
    # invariant=1 makes the file byte-identical on every run (no timestamps or random IDs).
    SimpleDocTemplate(str(out), pagesize=A4, title="Northwind Robotics Annual Report 2025", invariant=1).build(story)


if __name__ == "__main__":
    main()
