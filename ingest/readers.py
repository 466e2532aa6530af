"""Readers: turn a file into pages of text. PDFs page by page (PDFium), text and Markdown as UTF-8; Word,
Excel, PowerPoint, OpenDocument, RTF, HTML, CSV/TSV and email by their own readers (ingest.formats).

Every failure is a ReadError whose message names the problem, so the pipeline can record it against
that file and go on with the others.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

from docqa.core.errors import ReadError
from docqa.core.files import (
    EMAIL_SUFFIXES,
    HTML_SUFFIXES,
    PDF_SUFFIXES,
    SUPPORTED_SUFFIXES,
    TEXT_SUFFIXES,
)
from docqa.core.types import Page, ParsedDocument
from ingest.formats.csv_reader import read_csv
from ingest.formats.docx_reader import read_docx
from ingest.formats.eml_reader import read_eml
from ingest.formats.html_reader import read_html
from ingest.formats.odf_reader import read_odf
from ingest.formats.pptx_reader import read_pptx
from ingest.formats.rtf_reader import read_rtf
from ingest.formats.text_decoding import decode_text
from ingest.formats.text_units import INVISIBLE, ODD_SPACES
from ingest.formats.xlsx_reader import read_xlsx
from ingest.ocr import OcrOptions
from ingest.page_furniture import strip_furniture
from ingest.paragraphs import mark_paragraphs
from ingest.pdf_text import PageTexts, page_texts
from ingest.split_words import join_split_words

logger = logging.getLogger(__name__)

# Raise it whenever a reader's text changes for the same bytes (cleaning, page handling): documents
# read by an older version are then read again on the next ingest instead of kept as "unchanged".
# PDFs: 10: small capitals set apart from their first letter joined ("R ESORTS", ingest.split_words); 9: a
# newline character of the document's own between two glyphs of one line read as a space (ingest.pdf_text);
# 8: split words joined (ingest.split_words), running headers and footers left out (ingest.page_furniture);
# 7: paragraph breaks; 6: glued section numbers, enumerators, ordinals; 5: PDFium's U+FFFE, U+037E; 4: PDFium
READER_VERSION = 10
# Text and Markdown: one number with PDFs' until 6, though their reading last changed before it. Their own
# since, so that a PDF-only change leaves a stored text file as it is (read, chunked and embedded once).
TEXT_READER_VERSION = 6
# Word, Excel, PowerPoint, OpenDocument, RTF, HTML, CSV/TSV and email (ingest.formats): one number for them all.
# 2: a table cell's own line breaks read as spaces, so that its row stays one line (text_units.row_line);
# HTML that declares no charset read as UTF-8 (or as detected), where lxml read it as Latin-1
# 3: the title a file declares (HTML's <title>, Word's and PowerPoint's title, an email's Subject) names it
FORMATS_READER_VERSION = 3


def reader_version(path: Path) -> int:
    """The version of the reader this file goes through (ingest.pipeline.ingest_recipe records it)."""
    suffix = path.suffix.lower()
    if suffix in PDF_SUFFIXES:
        return READER_VERSION
    return TEXT_READER_VERSION if suffix in TEXT_SUFFIXES else FORMATS_READER_VERSION


_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
# PDF text layers break Chinese lines anywhere; a space or newline left between two CJK characters
# splits words for retrieval and for the model alike.
_CJK_GAP = re.compile(rf"(?<=[{_CJK}])[ \t]*\n?[ \t]*(?=[{_CJK}])")
_HYPHEN_BREAK = re.compile(r"(?<=[a-z])-\n(?=[a-z])")
# PDF text layers are full of no-break and typographic spaces (one CUAD contract: 882 NBSPs), which
# tokenizers split words on (more tokens per chunk, fewer words per chunk) and keyword search does
# not always treat as spaces; zero-width characters and soft hyphens break words apart (ODD_SPACES, INVISIBLE).
# Where a PDF places a heading's number and its first word apart with no space character between them,
# PDFium reads them glued: "1.1The initial term", "2.2Termination" (782 times in CUAD's PDFs, 152 in the
# same contracts as text). Keyword search then indexes "2termination", never "termination". A number with
# a dot, at the start of a line, before a capitalised word (so "3Com" and "2019Annual" stay as they are).
_GLUED_SECTION_NUMBER = re.compile(r"^([ \t]*\d{1,3}(?:(?:\.\d{1,3})+\.?|\.))(?=[A-Z][a-z])", re.MULTILINE)
# The same for enumerators: "(a)The Company", "(ii)During the term" (384 times in 28 CUAD PDFs, 25 as
# text); not after a letter ("Party(ies)") and not "(s)he".
_GLUED_ENUMERATOR = re.compile(r"(?<![\w)])(\((?:[a-rt-z]|[ivx]{2,4}|\d{1,2}|[A-Z])\))(?=[A-Za-z])")
# A superscript ordinal read as a word of its own: "the 5 th day of March".
_SPLIT_ORDINAL = re.compile(r"\b(\d{1,4})[ \t](st|nd|rd|th)\b")


def read_document(path: Path, password: str | None = None, ocr: OcrOptions | None = None) -> ParsedDocument:
    suffix = path.suffix.lower()
    if suffix in PDF_SUFFIXES:
        return read_pdf(path, password, ocr)
    if suffix in TEXT_SUFFIXES:
        return read_text(path)
    if suffix in HTML_SUFFIXES:  # printed pages, with their running headers and footers
        parsed = read_html(path)
        pages, _ = strip_furniture([page.text for page in parsed.pages])
        kept = [Page(p.number, text) for p, text in zip(parsed.pages, pages, strict=True)]
        return ParsedDocument(kept, parsed.warnings, title=parsed.title)
    if suffix in EMAIL_SUFFIXES:  # its attachments by their own readers, from the second page on
        return read_eml(path, lambda attachment: read_document(attachment, password, ocr))
    if suffix in _FORMAT_READERS:
        return _FORMAT_READERS[suffix](path)
    raise ReadError(
        f"unsupported file type '{suffix or path.name}': docqa reads {', '.join(sorted(SUPPORTED_SUFFIXES))}"
    )


_FORMAT_READERS: dict[str, Callable[[Path], ParsedDocument]] = {
    ".docx": read_docx,
    ".xlsx": read_xlsx,
    ".pptx": read_pptx,
    ".odt": read_odf,
    ".ods": read_odf,
    ".odp": read_odf,
    ".rtf": read_rtf,
    ".csv": read_csv,
    ".tsv": read_csv,
}


def clean_pdf_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = INVISIBLE.sub("", text.translate(ODD_SPACES))
    text = _CJK_GAP.sub("", text)
    text = _GLUED_SECTION_NUMBER.sub(r"\1 ", text)
    text = _GLUED_ENUMERATOR.sub(r"\1 ", text)
    text = _SPLIT_ORDINAL.sub(r"\1\2", text)
    return mark_paragraphs(_HYPHEN_BREAK.sub("", text))


def _page_ranges(numbers: list[int]) -> str:
    ranges: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], -1]:
        if n != prev + 1:
            ranges.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = n
        prev = n
    return ", ".join(ranges)


def read_pdf(
    path: Path, password: str | None = None, ocr: OcrOptions | None = None, ocr_budget_s: float = 60.0
) -> ParsedDocument:
    """Every page's text (PDFium, ingest.pdf_text; OCR as `ocr` says), cleaned; what could not be read,
    and what OCR read, is said in the warnings."""
    extracted = page_texts(path, password, ocr, ocr_budget_s)
    pages: list[Page] = []
    empty: list[int] = []
    cleaned, _ = strip_furniture([clean_pdf_text(raw) for raw in extracted.texts])
    cleaned, _ = join_split_words(cleaned)
    for number, text in enumerate(cleaned, 1):
        if not text.strip() and number not in extracted.failed:
            empty.append(number)
        pages.append(Page(number, text, ocr=number in extracted.ocr))
    warnings = []
    if extracted.ocr:
        warnings.append(f"pages {_page_ranges(extracted.ocr)} read by OCR")
    if empty:
        warnings.append(f"no text layer on pages {_page_ranges(empty)}; {_why_no_ocr(extracted, empty, ocr)}")
    if extracted.failed:
        warnings.append(f"text extraction failed on pages {_page_ranges(extracted.failed)}")
    if not any(p.text.strip() for p in pages):
        raise ReadError("; ".join(warnings) or "no text found")
    return ParsedDocument(pages, warnings)


def _why_no_ocr(extracted: PageTexts, empty: list[int], ocr: OcrOptions | None) -> str:
    if ocr is None or ocr.mode == "off":
        return "OCR not enabled"
    if extracted.ocr_unavailable:
        return extracted.ocr_unavailable
    if set(empty) & set(extracted.ocr_not_reached):
        return "OCR ran out of time (DOCQA_INGEST_PDF_TIMEOUT_S)"
    return "OCR found no text"


def read_text(path: Path) -> ParsedDocument:
    text, warnings = decode_text(path.read_bytes())
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # A form feed is a page break (pdftotext writes one per page), so page numbers survive.
    pages = [Page(i + 1, part) for i, part in enumerate(text.split("\f"))]
    if not any(p.text.strip() for p in pages):
        raise ReadError("the file is empty")
    return ParsedDocument(pages, warnings)
