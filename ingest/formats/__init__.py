"""Readers of the office and web formats users bring besides PDF and text: Word (.docx), Excel (.xlsx),
PowerPoint (.pptx) and HTML (.html, .htm).

Each gives pages as every reader does (docqa.core.types.ParsedDocument), with the unit a citation can
name as its page: a Word document's pages where it marks them (page breaks, and the breaks Word recorded
when it last laid the document out), a workbook's sheets, a deck's slides, an HTML file's printed pages
(the page breaks its style asks for, as EDGAR filings mark theirs). Headings are written as Markdown
headings ("## Liquidity"), which the keyword index and citations read as headings; tables stay rows,
their cells joined by " | ", so a number keeps its row's label. They run in the same isolated child as
PDFs (ingest.isolation), under the same time and memory limits.
"""
