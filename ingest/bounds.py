"""What one file may produce (issue: text bombs): a PDF of 189 kB whose streams inflate to 2 MiB a page
became 1,890 chunks, 7 million tokens and 500 MB on disk, and a 50 MiB one-line text file took the server
from 3.7 to 6.2 GB. A file past these bounds fails with the reason, before chunking and embedding cost
anything (a text file before it is even read)."""

from __future__ import annotations

from docqa.core.errors import ReadError
from docqa.core.settings import IngestSettings
from docqa.core.types import ParsedDocument

BYTES_PER_CHAR = 4  # UTF-8's most: a text file this many times the limit holds more characters than it


def too_much_text(chars: int, limit: int, at_least: str = "") -> ReadError:
    return ReadError(
        f"{at_least}{chars:,} characters of text, over the {limit:,} limit (DOCQA_INGEST_MAX_DOCUMENT_CHARS)"
    )


def over_the_request(chars: int, spent: int, limit: int) -> str:
    """Why a file of an upload was not ingested: the upload's text, with this file, would pass its bound."""
    return (
        f"{chars:,} characters of text, with the {spent:,} of the files before it over the upload's {limit:,} "
        "limit (DOCQA_API_MAX_UPLOAD_CHARS): send it in another request"
    )


def text_size(parsed: ParsedDocument) -> int:
    return sum(len(page.text) for page in parsed.pages)


def check_text_file_size(size: int, limits: IngestSettings) -> None:
    if size > BYTES_PER_CHAR * limits.max_document_chars:
        raise too_much_text(size // BYTES_PER_CHAR, limits.max_document_chars, "at least ")


def check_output(parsed: ParsedDocument, limits: IngestSettings, paged: bool = True, text_pages: bool = True) -> None:
    """paged: the pages are a PDF's. A text file without form feeds is one "page" by construction, bounded
    as a document only: 8 of CUAD's 408 contracts as text run past 200,000 characters (up to 338,211).
    text_pages=False: pages are units of the format, not printed pages (a workbook's sheet, a Word document
    Word never laid out), bounded as a document only."""
    for page in parsed.pages if paged or (text_pages and len(parsed.pages) > 1) else ():
        if len(page.text) > limits.max_page_chars:
            raise ReadError(
                f"page {page.number} has {len(page.text):,} characters of text, over the {limits.max_page_chars:,} "
                "limit (DOCQA_INGEST_MAX_PAGE_CHARS)"
            )
    total = text_size(parsed)
    if total > limits.max_document_chars:
        raise too_much_text(total, limits.max_document_chars)
