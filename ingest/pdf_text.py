"""A PDF's text, page by page, through PDFium (the pypdfium2 wheel, which ships its own library).

Chosen by measurement (`python -m bench.pdf_extractors`, docs/benchmarks/documents.md): on the pages that hold
FinanceBench's evidence, PDFium's text lets the scoring rule find the evidence on 60 of 68 pages, against
55 for pypdf (docqa's reader before), 56 for pdfplumber and for pdftotext -layout, and all 9 prospectus
pages as pypdf did; it reads a table row by row with the row label beside its numbers (pypdf split
"Cash Flow s" and put every cell on a line of its own), and it reads 270 pages/s on one core of this
VM against pypdf's 9. It also leaves out text placed outside the page (a text bomb's usual trick).

This runs inside the PDF child process (ingest.pdf_worker), under its time and memory limits.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2

from docqa.core.errors import ReadError
from ingest.ocr import OcrOptions, read_pages

logger = logging.getLogger(__name__)
# PDFium's text quirks, seen on CUAD's PDFs: U+FFFE where the PDF has a hyphen that could be a line-break
# hyphen ("NON\ufffeINFRINGEMENT", 98 times in 60 contracts), U+037E (Greek question mark) for ";".
_PDFIUM_CHARACTERS = str.maketrans({"\ufffe": "-", "\u037e": ";"})
# PDFium ends the lines it finds with "\r\n" of its own; a "\n" alone is a character of the document. Some
# filings converted from HTML map their word spaces to it ("MGM\nRESORTS\nINTERNATIONAL", "CONSOLIDATED\n
# BALANCE\nSHEETS": every word a line of its own, no heading left whole), seen in two financebench_dev filings.
_DOCUMENT_NEWLINE = re.compile(r"(?<!\r)\n")


@dataclass
class PageTexts:
    texts: list[str] = field(default_factory=list)  # raw text of pages 1..n ("" where extraction failed)
    failed: list[int] = field(default_factory=list)  # 1-based pages whose extraction raised
    ocr: list[int] = field(default_factory=list)  # 1-based pages whose text OCR read
    ocr_not_reached: list[int] = field(default_factory=list)  # pages OCR had no time left for
    ocr_unavailable: str | None = None  # why OCR could not run, where it was needed


def open_pdf(path: Path, password: str | None) -> pypdfium2.PdfDocument:
    """The document, or ReadError naming why not. An encrypted PDF that opens with the empty password
    (many are encrypted only to set permissions) opens without one."""
    with path.open("rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        raise ReadError("not a PDF: the file has no %PDF- header")
    try:
        return pypdfium2.PdfDocument(str(path), password=password)
    except pypdfium2.PdfiumError as exc:
        if "password" not in str(exc).lower():
            raise ReadError(f"malformed PDF: {exc}") from None
    decrypted = _decrypted_by_pypdf(path, password or "")
    if decrypted is None:  # a wrong password is said as such: it read the same as none (issue 41, 15)
        raise ReadError(
            "encrypted: the password given does not open it" if password else "encrypted: password required"
        )
    return pypdfium2.PdfDocument(decrypted)


def _decrypted_by_pypdf(path: Path, password: str) -> bytes | None:
    """PDFium does not try the password as the owner's: a file whose owner password is empty opens for
    anyone in other readers (two of the hostile set's do), but not in PDFium. pypdf tries both: it
    decrypts, and PDFium reads the decrypted copy. None: the password opens it neither way."""
    from pypdf import PdfReader, PdfWriter

    try:
        reader = PdfReader(path)
        if not reader.decrypt(password):
            return None
        out = io.BytesIO()
        PdfWriter(clone_from=reader).write(out)
        return out.getvalue()
    except Exception:  # pypdf raises many ad-hoc types on damaged files: not decryptable here
        return None


def page_texts(
    path: Path, password: str | None = None, ocr: OcrOptions | None = None, ocr_budget_s: float = 60.0
) -> PageTexts:
    """Every page's text layer; then, as `ocr` says, OCR for the pages without one (or for all)."""
    pdf = open_pdf(path, password)
    try:
        n_pages = len(pdf)
        if n_pages == 0:
            raise ReadError("the PDF has no pages")
        out = PageTexts()
        for number in range(1, n_pages + 1):
            out.texts.append(_page_text(pdf, number, path, out.failed))
        if ocr is not None and ocr.mode != "off":
            _add_ocr(pdf, out, ocr, ocr_budget_s)
        return out
    finally:
        pdf.close()


def _add_ocr(pdf: pypdfium2.PdfDocument, out: PageTexts, ocr: OcrOptions, budget_s: float) -> None:
    wanted = [n for n, text in enumerate(out.texts, 1) if ocr.mode == "force" or not text.strip()]
    if not wanted:
        return
    result = read_pages(pdf, wanted, ocr, budget_s)
    out.ocr_unavailable, out.ocr_not_reached = result.unavailable, result.not_reached
    for number, text in result.texts.items():
        if text.strip():
            out.texts[number - 1] = text
            out.ocr.append(number)


def _page_text(pdf: pypdfium2.PdfDocument, number: int, path: Path, failed: list[int]) -> str:
    try:
        page = pdf[number - 1]
        try:
            textpage = page.get_textpage()
            try:
                return _document_newlines_read(textpage, str(textpage.get_text_range()).translate(_PDFIUM_CHARACTERS))
            finally:
                textpage.close()
        finally:
            page.close()
    except MemoryError:
        raise  # past the parser's memory limit: the whole file fails with that reason
    except Exception as exc:  # one bad page must not lose the rest of the document
        logger.debug("page %d of %s: %s", number, path.name, exc)
        failed.append(number)
        return ""


def _document_newlines_read(textpage: pypdfium2.PdfTextPage, text: str) -> str:
    """The page's text with each newline character of the document's own that sits between two glyphs
    of one line read as the word space it stands for (one character for one: offsets into the page's
    text stay the same); a newline that does end a line stays."""
    if not _DOCUMENT_NEWLINE.search(text) or len(text) != textpage.count_chars():  # PDFium's own "\r\n" only
        return text
    chars = list(text)
    for found in _DOCUMENT_NEWLINE.finditer(text):
        at = found.start()
        if 0 < at < len(text) - 1 and _on_one_line(textpage.get_charbox(at - 1), textpage.get_charbox(at + 1)):
            chars[at] = " "
    return "".join(chars)


def _on_one_line(before: tuple[float, ...], after: tuple[float, ...]) -> bool:
    """Two glyph boxes (left, bottom, right, top) on one line: baselines within half a glyph's height
    and the second to the right of the first."""
    height = max(before[3] - before[1], after[3] - after[1], 1.0)
    return abs(before[1] - after[1]) <= 0.5 * height and after[0] >= before[0]
