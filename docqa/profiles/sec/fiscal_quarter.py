"""Which fiscal quarter a quarterly report covers, and which fiscal year it belongs to, from its balance sheet.

A 10-Q's cover gives only the calendar date its quarter ended ("For the quarterly period ended December 31,
2022"); a question asks for the filer's own quarter ("Amcor's Q2 of FY2023", whose year ends in June). The
file name often says it ("AMCOR_2023Q2_10Q.pdf"), but a file named by EDGAR or by its user does not. Every
10-Q's balance sheet sets the quarter's end beside the end of the last fiscal year (Regulation S-X Rule
10-01(c)(1)), and its heading or the table of contents line naming it carries both dates ("Balance Sheets as of
July 29, 2023, January 28, 2023, and July 30, 2022"): three months after the year's end is the first quarter,
six the second, nine the third (a year of 52 or 53 weeks moves them by days, not months), and the fiscal year
is the one that ends about a year after the last one did.

Pure functions of text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, timedelta
from typing import TypeGuard

from docqa.profiles.sec.covers import DATE, MONTHS
from docqa.profiles.sec.identity import FilingIdentity

_BALANCE_SHEET = re.compile(r"balance\s+sheets?|statements?\s+of\s+financial\s+(?:position|condition)", re.I)
_WINDOW = 300  # the dates follow the heading closely: "Balance Sheets (Unaudited) ($ in millions) December 31, ..."
# days from the last fiscal year's end to the quarter's end, per quarter (13 weeks a quarter, give or take)
_QUARTER_DAYS = ((1, 80, 100), (2, 170, 195), (3, 260, 285))


def needs_quarter(identity: FilingIdentity | None) -> TypeGuard[FilingIdentity]:
    """Whether the filing is a quarterly report whose file name gave no quarter, with one period end to read
    its quarter against: retrieval and the catalog both read it then, from the same chunks' text."""
    return (
        identity is not None and identity.form == "10-Q" and identity.quarter is None and len(identity.period_ends) == 1
    )


def quarter_from_balance_sheet(texts: Iterable[str], period_end: tuple[int, int]) -> tuple[int, int] | None:
    """(fiscal quarter, the calendar year its fiscal year ends in) of a quarterly report whose period ended in
    `period_end` (year, month), read from the first balance sheet heading followed by that date and the last
    fiscal year's end; None where none is."""
    for text in texts:
        for heading in _BALANCE_SHEET.finditer(text):
            found = _quarter(_dates(text[heading.end() : heading.end() + _WINDOW]), period_end)
            if found is not None:
                return found
    return None


def _dates(text: str) -> list[date]:
    out = []
    for month, day, year in DATE.findall(text):
        try:
            out.append(date(int(year), MONTHS.index(month.lower()) + 1, int(day)))
        except ValueError:  # "February 30": no date
            continue
    return out


def _quarter(dates: list[date], period_end: tuple[int, int]) -> tuple[int, int] | None:
    end = next((d for d in dates if (d.year, d.month) == period_end), None)
    if end is None:
        return None
    for earlier in dates:
        days = (end - earlier).days
        for quarter, low, high in _QUARTER_DAYS:
            if low <= days <= high:
                return quarter, (earlier + timedelta(days=364)).year  # the year the next year-end falls in
    return None
