"""How a filer names the fiscal year a filing reports on, where that is not the year it ends in.

A retailer's year of 52 or 53 weeks ending on the Saturday nearest January 31 is "fiscal 2022" at Target,
Foot Locker, Home Depot or Ulta Beauty (named for the calendar year most of it fell in), but "fiscal 2023" at
Walmart and Best Buy (named for the year it ends in); a year ended March 31, 2023 is many a Japanese filer's
"fiscal 2022". The cover gives only the end date ("For the fiscal year ended January 28, 2023"), while a
question uses the filer's own name for the year ("Foot Locker's FY2022 revenue"). The filing says which where
it defines its fiscal year, in Item 7 or the first note: "Fiscal 2022 represented the 52 weeks ended January
28, 2023", "the 53 weeks ended February 3, 2024 ("fiscal 2023")", "fiscal year 2022 ended January 28, 2023".

Pure functions of text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from docqa.profiles.sec.covers import DATE, MONTHS

# Months in which a fiscal year ends that filers name for its start year (the retail calendar, Japan's March).
EARLY_YEAR_MONTHS = frozenset({1, 2, 3})
ANNUAL_FORMS = frozenset({"10-K", "20-F", "40-F", "annual report"})  # a quarterly report's year is read elsewhere
_NAMED = re.compile(r"\b(?:fiscal\s+(?:year\s+)?|FY\s?)((?:19|20)\d\d)\b", re.I)
_NAMED_AFTER = re.compile(r"\s*\(\s*(?:the\s+)?[\"“']?\s*(?:fiscal\s+(?:year\s+)?|FY\s?)((?:19|20)\d\d)\b", re.I)
_BEFORE_CHARS = 100  # "Fiscal 2022 represented the 52 weeks ended ": the name precedes the date closely
# Where no sentence ties a name to the date: the year named at least this many times, and this many times as
# often as the other candidate (a report's own year against the year before it, or its outlook's).
MIN_MENTIONS = 5
MENTIONS_RATIO = 1.5


def needs_reading(form: str | None, period_ends: Iterable[tuple[int, int]]) -> bool:
    """Whether an annual report's year may carry a name other than its end year (it ends early in a year)."""
    return form in ANNUAL_FORMS and any(month in EARLY_YEAR_MONTHS for _, month in period_ends)


def fiscal_years_named(texts: Iterable[str], period_ends: frozenset[tuple[int, int]]) -> frozenset[int]:
    """The fiscal year(s) a filing's text names its period: for each mention of a period end's date, the
    "fiscal YYYY" just before it (with no other date between) or in a parenthesis right after it, when
    that is the end year or the one before; the most named. Where no sentence ties a name to the date
    ("Fiscal 2023, fiscal 2022 and fiscal 2021 included 52 weeks"), the one of the two years the text names
    clearly more often: an annual report speaks of its own year more than of the one before or of its
    outlook. None when the text does not say."""
    texts = list(texts)
    named = _tied_to_dates(texts, period_ends)
    if not named:
        named = _most_mentioned(texts, period_ends)
    if not named:
        return frozenset()
    most = max(named.values())
    return frozenset(year for year, count in named.items() if count == most)


def _most_mentioned(texts: list[str], period_ends: frozenset[tuple[int, int]]) -> Counter[int]:
    """How often the text says "fiscal Y" and "fiscal Y-1" for the period's end year Y, when one of them
    comes at least MENTIONS_RATIO times as often as the other, and MIN_MENTIONS times; else nothing."""
    years = {year for year, _ in period_ends}
    if len(years) != 1:
        return Counter()
    (end,) = years
    counts = Counter(int(m.group(1)) for text in texts for m in _NAMED.finditer(text))
    pair = Counter({year: counts[year] for year in (end - 1, end)})
    (top, high), (_, low) = pair.most_common(2)
    return Counter({top: high}) if high >= MIN_MENTIONS and high >= MENTIONS_RATIO * low else Counter()


def _tied_to_dates(texts: list[str], period_ends: frozenset[tuple[int, int]]) -> Counter[int]:
    named: Counter[int] = Counter()
    for text in texts:
        dates = list(DATE.finditer(text))
        for i, date in enumerate(dates):
            year = int(date.group(3))
            if (year, MONTHS.index(date.group(1).lower()) + 1) not in period_ends:
                continue
            after = _NAMED_AFTER.match(text, date.end())
            start = max(date.start() - _BEFORE_CHARS, dates[i - 1].end() if i else 0)
            before = list(_NAMED.finditer(text, start, date.start()))
            found = after or (before[-1] if before else None)
            if found and int(found.group(1)) in (year - 1, year):
                named[int(found.group(1))] += 1
    return named
