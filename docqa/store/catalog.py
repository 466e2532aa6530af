"""A document's catalog entry: what it is, read at ingest, and what its uploader said it is.

For a document a profile knows (a filing, say), the fields that profile reads: the company, its trading
symbols, the form, the fiscal year and quarter, ... For any other document: its title (the first line of its
text that reads as one). A user's own fields (an upload's `metadata`: company, period, title, tags, or any
other short field) are kept beside and win over what was read. Asks filter on it (`where`), as metadata
filters do in other RAG tools.

Pure functions of text and plain values; the store keeps the entry as JSON with the document.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from docqa.core.catalog_fields import MAX_VALUE_CHARS
from docqa.core.identity import DocumentReader

_TITLE_LINE = re.compile(r"[^\W\d_].{2,}")
# what stands above a title without being one: an exhibit's label as EDGAR filings carry it, a version mark
_LABEL = re.compile(
    r"(?:exhibit|ex-)\s*[\w.()-]*\d[\w.()-]*|execution (?:version|copy)|conformed copy|confidential(?: treatment)?"
    r"(?: requested)?|final(?: version)?|draft",
    re.IGNORECASE,
)
_KIND_OF_DOCUMENT = re.compile(
    r"\b(?:AGREEMENT|CONTRACT|AMENDMENT|ADDENDUM|LICEN[CS]E|LEASE|MEMORANDUM|DEED|CHARTER|BYLAWS|INDENTURE|"
    r"GUARANT(?:EE|Y)|WARRANT|PLAN|POLICY|STATEMENT OF WORK)S?\b|协议|合同|章程",
    re.IGNORECASE,
)
_SENTENCE_START = {"THIS", "WHEREAS", "BETWEEN", "DATED", "MADE", "ENTERED", "BY"}
MAX_TITLE_WORDS = 16


def read_catalog(
    file_name: str, head: str, reader: DocumentReader, texts: Sequence[str] = (), declared_title: str | None = None
) -> dict[str, Any]:
    """What the document's file name and first text say it is: a profile's catalog fields where one knows the
    document (`reader`, the profiles the store was given), else its title; `texts`, the whole document's;
    `declared_title`, the title the file itself declares, over the first line of its text."""
    read = reader.catalog(file_name, head, texts)
    if read is not None:
        return read
    title = " ".join((declared_title or "").split()) or document_title(head)
    return {"kind": "document", **({"title": title[:MAX_VALUE_CHARS]} if title else {})}


def document_title(head: str) -> str | None:
    """The first line of the text that names a kind of document ("SERVICES AGREEMENT"), else the first that
    reads as a title, past the labels above it ("Exhibit 10.2", "Execution Version"); where a line runs on
    into the text (a contract whose first paragraph is one line), its
    leading capitals ("CONSULTING AGREEMENT THIS AGREEMENT is dated ..." gives "CONSULTING AGREEMENT")."""
    lines = []
    for line in head[:2000].splitlines():
        text = line.strip()
        while (label := _LABEL.match(text)) and label.end() > 0:
            text = text[label.end() :].lstrip(" :.-–—")
        if _TITLE_LINE.match(text):
            lines.append(_leading_heading(text))
    # a contract is titled by what it is; a legend above it ("Certain identified information has been
    # excluded ...") is not its title
    named = next((line for line in lines if _KIND_OF_DOCUMENT.search(line) and len(line.split()) <= 12), None)
    return named or (lines[0] if lines else None)


def _leading_heading(line: str) -> str:
    words = line.split()
    if len(words) <= MAX_TITLE_WORDS:
        return line
    capitals: list[str] = []
    for word in words:
        shouted = word == word.upper() and (any(c.isalpha() for c in word) or bool(capitals))  # "&" inside a run
        if not shouted or (capitals and word in _SENTENCE_START):
            break
        capitals.append(word)
    return " ".join(capitals) if len(capitals) >= 2 else " ".join(words[:MAX_TITLE_WORDS])


def merged(read: Mapping[str, Any], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The entry: what was read, with the uploader's fields over it (and named as theirs)."""
    if not given:
        return dict(read)
    return {**read, **given, "user_fields": sorted(given)}


def matches(entry: Mapping[str, Any], where: Sequence[tuple[str, str]]) -> bool:
    """Whether a document's entry meets every condition. Values compare without case; a list field
    (tickers, tags) matches when one item does; `company` also matches a ticker, or the first words of
    the company's name ("3M" for "3M COMPANY", "best buy" for "BEST BUY CO., INC.", "国电电力" for
    "国电电力发展股份有限公司"); `year` is the fiscal year."""
    return all(_meets(entry, name, wanted.strip().casefold()) for name, wanted in where)


def why_none_match(entries: Sequence[Mapping[str, Any]], where: Sequence[tuple[str, str]]) -> str | None:
    """Why no entry meets the conditions, naming the first condition that no entry meets on its own and
    what the entries hold instead (a misspelled field: the fields there are; a value: the values there are);
    None where some entry meets them all."""
    if any(matches(entry, where) for entry in entries):
        return None
    for name, wanted in where:
        if any(matches(entry, [(name, wanted)]) for entry in entries):
            continue
        field = "fiscal_year" if name == "year" else name
        held = sorted({str(v) for entry in entries for v in _values(entry.get(field, entry.get(name)))})
        if not held:
            fields = sorted({key for entry in entries for key in entry})
            close = difflib.get_close_matches(name, fields, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            return f"no document has a catalog field '{name}'{hint}; the fields there are: {_listed(fields)}"
        return f"no document has {name}={wanted}; the values of {name} there are: {_listed(held)}"
    return "no document meets all the conditions together (each is met by some document)"


def _values(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _listed(items: Sequence[str], most: int = 12) -> str:
    if not items:
        return "none (`docqa docs list` shows each document's catalog)"
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def _meets(entry: Mapping[str, Any], name: str, wanted: str) -> bool:
    field = "fiscal_year" if name == "year" and "year" not in entry else name
    value = entry.get(field)
    values = [str(v).casefold() for v in (value if isinstance(value, list) else [value] if value is not None else [])]
    if wanted in values:
        return True
    if name != "company":
        return False
    tickers = [str(t).casefold() for t in entry.get("tickers", [])]
    words = _words(str(entry.get("company", "")))
    asked = _words(wanted)
    if wanted in tickers or (bool(asked) and words[: len(asked)] == asked):
        return True
    # a Chinese name has no spaces: its start is its short form ("国电电力" for "国电电力发展股份有限公司")
    return len(wanted) >= 2 and not wanted.isascii() and str(entry.get("company", "")).casefold().startswith(wanted)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())
