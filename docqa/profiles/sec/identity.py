"""What a filing is, as its cover and file name say (docqa.profiles.sec.covers reads SEC covers and results
releases, docqa.profiles.csrc.covers Chinese listed companies' filings); the questions that name a filing are
matched against it (docqa.profiles.sec.filers). It is the store's DocumentIdentity for both profiles."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FilingIdentity:
    """What a filing's cover page and file name say about it."""

    # the company's names: lowercased words, corporate suffixes dropped; a Chinese name is one CJK string
    names: tuple[tuple[str, ...], ...]
    tickers: frozenset[str]  # "MGM", "PEP": matched in a question only as written, in capitals; "002610"
    years: frozenset[int]  # every fiscal year it may be reporting on (period end, "fiscal 2022", file name)
    form: str | None  # "10-K", "10-Q", "8-K", "20-F", "earnings"; "prospectus", "annual report", ...
    quarter: int | None
    period_ends: frozenset[tuple[int, int]] = frozenset()  # (year, month) of the period or event it reports
    company: str | None = None  # the name as the cover writes it ("BEST BUY CO., INC."), for people to read
    # the fiscal year as the filer names it where its text says so ("fiscal 2022" for a year that ended
    # January 28, 2023: docqa.profiles.sec.fiscal_naming); also in `years`
    fiscal_years: frozenset[int] = frozenset()
    profile: str = "sec"  # the profile that read it: "sec" or "csrc"
