"""The period and form a question asks about, in the many ways analysts write them.

A filing reports on a fiscal period and is one form (docqa.profiles.sec.covers reads both from its cover);
a question names them as it pleases: "FY2018", "fiscal 2018", "Q2'23", "2Q23", "the quarter ended June 30,
2023", "the first half of 2023", "2018年度", "the 10-Q", "the earnings release". Read here into an
AskedPeriod, which the filing choice (docqa.profiles.sec.filers) compares with each cover.

Pure functions of the question's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docqa.profiles.sec.covers import MONTHS, form_name, quarter_of


@dataclass(frozen=True)
class AskedPeriod:
    """The period and form a question names."""

    latest_year: int | None = None
    quarter: int | None = None
    form: str | None = None  # "10-K", "10-Q", "8-K", "20-F", "earnings", "proxy"
    period_end: tuple[int, int] | None = None  # (year, month): "as of June 30, 2023", "the quarter ended July 2023"
    most_recent: bool = False  # "last year", "the latest 10-K", "most recent quarter": no period named, the newest


# "FY2018", "FY 18", "CY2018", "fiscal 2018", "fiscal year 2018", "fiscal '18", "2018财年", "2018年度", a bare year.
_ASKED_YEAR = re.compile(
    r"\b(?:fy|cy|fiscal\s+(?:year\s+)?')\s*'?(\d{4}|\d{2})(?!\d)|\bfiscal\s+(?:year\s+)?((?:19|20)\d\d)\b"
    r"|((?:19|20)\d\d)\s*(?:财年|年度|年)"
    r"|\b((?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_ASKED_FORM = re.compile(
    r"\b(10-?k|10-?q|8-?k|20-?f|40-?f|6-?k)\b|(annual report)|(quarterly report)|(current report)"
    r"|((?:earnings|press|results) (?:release|report|announcement|call))|(proxy statement|def 14a)",
    re.IGNORECASE,
)
_SPLIT_PERIOD = re.compile(r"\b(q[1-4]|fy\s*'?\d{2,4}|(?:19|20)\d\d)(fy|q[1-4]|h[12]|')", re.IGNORECASE)
# a quarter or half with a two-digit year: "Q2'23", "2Q23", "1H24", and after a dash or slash "Q2-23", "Q2/23"
_SHORT_YEAR = re.compile(
    r"\bq[1-4]\s*'(\d\d)\b|\b[1-4]q(\d\d)\b|\b[12]h(\d\d)\b|\b(?:q[1-4]|[1-4]q)[-/](\d\d)(?![\d/-])", re.IGNORECASE
)
# a quarter run into its four-digit year, as results releases and their file names write it: "Q22023", "2Q2023"
_JOINED_QUARTER = re.compile(r"\b(q[1-4]|[1-4]q)((?:19|20)\d\d)\b", re.IGNORECASE)
# a fiscal year written as the two calendar years it spans ("FY2022/23", "fiscal 2022-23", "2018–19"): its end
_SPANNED_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)\s*[/\-–]\s*(\d\d)(?![\d/\-])")
# a date in digits: ISO ("2022-08-19") or the US order ("8/19/2022", "08/19/2022")
_NUMERIC_DATE = re.compile(r"(?<![\d/-])(?:((?:19|20)\d\d)-(\d\d)-\d\d|(\d{1,2})/\d{1,2}/((?:19|20)\d\d))(?![\d/-])")
# a period named by its place, not its year: the newest filing of the filer asked about
_MOST_RECENT = re.compile(
    r"\b(?:latest|most recent|newest|last (?:fiscal )?(?:year|quarter)"
    r"|(?:this|the current) (?:fiscal )?(?:year|quarter))\b",
    re.IGNORECASE,
)
_HALF = re.compile(r"\b(?:first|1st)\s+half\b|\bh1\b|\b1h(?:\d\d)?\b|\bsix[- ]months?\b|\bsemi-?annual", re.I)
_ASKED_DATE = re.compile(
    r"\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)\.?\s+(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?((?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def asked_period(question: str) -> AskedPeriod:
    """The latest fiscal year a question names (a question comparing FY2019 with FY2020 is answered by
    the FY2020 filing, which reports both), its quarter, the form it names and a period-end month, if any.
    Periods are written many ways: "Q2 of FY2024", "2021 Q1", "Q2'23", "2Q23", "Q2-23", "Q22023", "2Q2023",
    "Q2FY23", "FY23", "FY2022/23"
    (the year it ends in), "the second quarter of fiscal 2023", "first half of 2023" / "H1 2023" (a half ends
    with the second quarter, "nine months" with the third), "the quarter ended June 30, 2023"."""
    spaced = _SPLIT_PERIOD.sub(r"\1 \2", question)  # "Q2FY23" -> "Q2 FY23", "FY2023Q1", "2023Q1" -> "... Q1"
    spaced = _JOINED_QUARTER.sub(r"\1 \2", spaced)  # "Q22023" -> "Q2 2023"
    years = []
    for fy, fiscal, cjk, bare in _ASKED_YEAR.findall(spaced):
        if fy:
            years.append(int(fy) + (2000 if len(fy) == 2 else 0))
        else:
            years.append(int(fiscal or cjk or bare))
    years += [2000 + int(next(y for y in found.groups() if y)) for found in _SHORT_YEAR.finditer(spaced)]
    for start, end in _SPANNED_YEAR.findall(spaced.replace("‐", "-")):
        if int(end) == (int(start) + 1) % 100:  # "2022-23", not "2022-08" in a date
            years.append(int(start) // 100 * 100 + int(end) + (100 if end == "00" else 0))
    quarter = quarter_of(re.sub(r"\bfy\s*\d{2,4}", " ", spaced, flags=re.IGNORECASE).replace("FY", " "))
    quarter = quarter or _half_or_nine_months(spaced)
    period_end = _date_asked(spaced)
    if period_end is not None:
        years.append(period_end[0])
    recent = None if years else _MOST_RECENT.search(spaced)
    form = _asked_form(spaced)
    if recent is not None and form is None and re.match(r"last (?:fiscal )?year", recent.group(), re.IGNORECASE):
        form = "10-K"  # the last whole year: an annual report's
    return AskedPeriod(max(years) if years else None, quarter, form, period_end, recent is not None)


_ASKED_FORM_ZH = (  # the forms of Chinese filings (docqa.profiles.csrc.covers), as questions name them
    (re.compile(r"招股(?:说明书|意向书)"), "prospectus"),
    (re.compile(r"半年度报告|半年报|中报"), "half-year report"),
    (re.compile(r"季度报告|季报"), "quarterly report"),
    (re.compile(r"年度报告|年报"), "annual report"),
)


def _asked_form(question: str) -> str | None:
    for pattern, form in _ASKED_FORM_ZH:
        if pattern.search(question):
            return form
    found = _ASKED_FORM.search(question)
    if not found:
        return None
    sec, annual, quarterly, current, release, _ = found.groups()
    if sec:
        return form_name(sec)
    return "10-K" if annual else "10-Q" if quarterly else "8-K" if current else "earnings" if release else "proxy"


def _date_asked(question: str) -> tuple[int, int] | None:
    """The (year, month) of a date the question names: "June 30, 2023", "July 2022", "2022-08-19", "8/19/2022"."""
    dated = _ASKED_DATE.search(question)
    if dated:
        return int(dated.group(2)), MONTHS.index(dated.group(1)[:3].lower()) + 1
    numeric = _NUMERIC_DATE.search(question)
    if numeric is None:
        return None
    iso_year, iso_month, us_month, us_year = numeric.groups()
    year, month = (int(iso_year), int(iso_month)) if iso_year else (int(us_year), int(us_month))
    return (year, month) if 1 <= month <= 12 else None


def _half_or_nine_months(question: str) -> int | None:
    if _HALF.search(question):
        return 2
    return 3 if re.search(r"\bnine[- ]months?\b|\b9[- ]?m\b", question, re.IGNORECASE) else None
