"""A filing's catalog entry, as its cover, file name and statements give it: the company as the cover writes it,
its trading symbols, the form, the fiscal year and quarter, the month its period ends (docqa.store.catalog keeps
it with the document; asks filter on it).

Pure functions of text and the identity read from the cover.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from docqa.core.catalog_fields import MAX_VALUE_CHARS
from docqa.profiles.sec.fiscal_naming import fiscal_years_named, needs_reading
from docqa.profiles.sec.fiscal_quarter import needs_quarter, quarter_from_balance_sheet
from docqa.profiles.sec.identity import FilingIdentity

_FISCAL_YEAR_SAID = re.compile(r"\bfiscal(?:\s+year)?\s+((?:19|20)\d\d)\b", re.IGNORECASE)


def filing_catalog(file_name: str, identity: FilingIdentity, head: str, texts: Sequence[str]) -> dict[str, Any]:
    """The catalog entry of a filing whose cover the profile read (`identity`); `texts`, the whole document's,
    where it defines a fiscal year that ends early in a calendar year (docqa.profiles.sec.fiscal_naming)."""
    entry: dict[str, Any] = {"kind": "filing", "form": identity.form}
    if identity.company:
        entry["company"] = identity.company[:MAX_VALUE_CHARS]
    if identity.tickers:
        entry["tickers"] = sorted(identity.tickers)
    # a 10-Q named by nothing: its quarter and fiscal year as its balance sheet dates them, as retrieval
    # reads them (docqa.profiles.sec.fiscal_quarter)
    dated = quarter_from_balance_sheet(texts, max(identity.period_ends)) if needs_quarter(identity) else None
    if dated is not None:
        entry["fiscal_year"], entry["quarter"] = dated[1], dated[0]
    else:
        if identity.years:
            entry["fiscal_year"] = _fiscal_year(file_name, identity, head, texts)
        if identity.quarter:
            entry["quarter"] = identity.quarter
    if identity.period_ends:
        year, month = max(identity.period_ends)
        entry["period_end"] = f"{year:04d}-{month:02d}" if month else f"{year:04d}"
    return entry


def _fiscal_year(file_name: str, identity: FilingIdentity, head: str, texts: Sequence[str]) -> int:
    """The fiscal year the filing reports on: the year its file name gives (a company's own count: Best
    Buy's fiscal 2024 second quarter ended in July 2023); else, for a year that ends early in a calendar
    year, the one its filer names it by where its text says ("Fiscal 2022 represented the 52 weeks ended
    January 28, 2023"); for a quarterly report, else the fiscal year its text first names ("fiscal 2024")
    where that is the period end's year or the next (a 10-Q's cover gives only the quarter's end); else the
    latest year its cover names."""
    named = [int(y) for y in re.findall(r"(?<!\d)((?:19|20)\d\d)(?!\d)", file_name)]
    if named and named[0] in identity.years:
        return named[0]
    if texts and needs_reading(identity.form, identity.period_ends):
        by_filer = fiscal_years_named(texts, identity.period_ends)
        if len(by_filer) == 1:
            return next(iter(by_filer))
    latest = max(identity.years)
    if identity.form == "10-Q":
        said = _FISCAL_YEAR_SAID.search(head[:20_000])
        if said and int(said.group(1)) in (latest, latest + 1):
            return int(said.group(1))
    return latest
