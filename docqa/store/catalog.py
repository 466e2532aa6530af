"""A document's catalog entry: what it is, read at ingest, and what its uploader said it is.

For an SEC filing or results release (docqa.store.keyword.filings reads its cover and file name): the
company as the cover writes it, its trading symbols, the form, the fiscal year and quarter, the month its
period ends. For any other document: its title (the first line of its text that reads as one). A user's
own fields (an upload's `metadata`: company, period, title, tags, or any other short field) are kept
beside and win over what was read. Asks filter on it (`where`), as metadata filters do in other RAG tools.

Pure functions of text and plain values; the store keeps the entry as JSON with the document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from docqa.core.catalog_fields import MAX_VALUE_CHARS
from docqa.store.keyword import filings

_FISCAL_YEAR_SAID = re.compile(r"\bfiscal(?:\s+year)?\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_TITLE_LINE = re.compile(r"[^\W\d_].{2,}")


def read_catalog(file_name: str, head: str) -> dict[str, Any]:
    """What the document's file name and first text say it is."""
    identity = filings.read_identity(file_name, head)
    if identity is None:
        title = next((line.strip() for line in head[:2000].splitlines() if _TITLE_LINE.match(line.strip())), None)
        return {"kind": "document", **({"title": title[:MAX_VALUE_CHARS]} if title else {})}
    entry: dict[str, Any] = {"kind": "filing", "form": identity.form}
    if identity.company:
        entry["company"] = identity.company[:MAX_VALUE_CHARS]
    if identity.tickers:
        entry["tickers"] = sorted(identity.tickers)
    if identity.years:
        entry["fiscal_year"] = _fiscal_year(file_name, identity, head)
    if identity.quarter:
        entry["quarter"] = identity.quarter
    if identity.period_ends:
        year, month = max(identity.period_ends)
        entry["period_end"] = f"{year:04d}-{month:02d}" if month else f"{year:04d}"
    return entry


def _fiscal_year(file_name: str, identity: filings.FilingIdentity, head: str) -> int:
    """The fiscal year the filing reports on: the year its file name gives (a company's own count: Best
    Buy's fiscal 2024 second quarter ended in July 2023); for a quarterly report, else the fiscal year its
    text first names ("fiscal 2024") where that is the period end's year or the next (a 10-Q's cover gives
    only the quarter's end); else the latest year its cover names."""
    named = [int(y) for y in re.findall(r"(?<!\d)((?:19|20)\d\d)(?!\d)", file_name)]
    if named and named[0] in identity.years:
        return named[0]
    latest = max(identity.years)
    if identity.form == "10-Q":
        said = _FISCAL_YEAR_SAID.search(head[:20_000])
        if said and int(said.group(1)) in (latest, latest + 1):
            return int(said.group(1))
    return latest


def merged(read: Mapping[str, Any], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The entry: what was read, with the uploader's fields over it (and named as theirs)."""
    if not given:
        return dict(read)
    return {**read, **given, "user_fields": sorted(given)}


def matches(entry: Mapping[str, Any], where: Sequence[tuple[str, str]]) -> bool:
    """Whether a document's entry meets every condition. Values compare without case; a list field
    (tickers, tags) matches when one item does; `company` also matches a ticker, or the first words of
    the company's name ("3M" for "3M COMPANY", "best buy" for "BEST BUY CO., INC."); `year` is the fiscal
    year."""
    return all(_meets(entry, name, wanted.strip().casefold()) for name, wanted in where)


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
    return wanted in tickers or (bool(asked) and words[: len(asked)] == asked)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())
