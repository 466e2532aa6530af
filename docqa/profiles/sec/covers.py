"""A filing's identity (who filed it, which form, which fiscal period) read from its cover page and file
name.

A question about a filing names its company and usually its fiscal year ("What is the FY2018 capital
expenditure amount for 3M?"). BM25 over 40 filings does not read it that way: an earnings release, short
and dense with the same financial words, outranks the 10-K the question names (financebench_dev, all 40
filings searched: 33 of 68 questions' first-pass document was another company's filing or another year's).
Company names are single words the titles' naming runs (docqa.store.keyword.titles) leave alone, and a
fiscal year is not a title word at all. So a filing's identity is read here, from what every SEC filing
and press release prints on its first page ("For the fiscal year ended December 31, 2018", the line above
"(Exact name of registrant as specified in its charter)", "Amcor reports fiscal 2023 results",
"(NYSE: MGM)") and from its file name ("3M_2018_10K.pdf"); the store keeps every filing's identity
(docqa.store.keyword.identities), the catalog shows it, and retrieval matches questions against it
(docqa.profiles.sec.filers).

Pure functions of text: no database, no model.
"""

from __future__ import annotations

import re

from docqa.profiles.sec.identity import FilingIdentity
from docqa.store.keyword import lexical

# Where the forms' cover page puts what is read (Form 10-K, 10-Q and 8-K, "General Instructions" and the cover
# page itself): the form's name and the Commission's above the registrant's name; then the period, the
# Section 12(b) table of securities and the filer-status check boxes, which fill the rest of a page of text.
COVER_CHARS = 1500  # the title block ("FORM 10-K"); a results release may cite a 10-Q further on
HEAD_CHARS = 5000  # the whole cover page: one page of the form's text, its Section 12(b) table included
# Words that say what kind of company, not which: "Best Buy Co., Inc." is named "Best Buy".
_SUFFIX_WORDS = "inc incorporated corp corporation co company companies ltd limited plc llc lp nv sa ag se holdings"
_SUFFIXES = frozenset([*_SUFFIX_WORDS.split(), "group", "the"])
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE_YEAR = rf"{_MONTH}\s+\d{{1,2}}\s*,?\s*((?:19|20)\d\d)"
_ANNUAL = re.compile(rf"fiscal\s+year\s+ended\s*:?\s*{_DATE_YEAR}", re.IGNORECASE)
_QUARTERLY = re.compile(rf"quarterly\s+period\s+ended\s*:?\s*{_DATE_YEAR}", re.IGNORECASE)
_CURRENT = re.compile(rf"date\s+of\s+report[^:]{{0,60}}:\s*{_DATE_YEAR}", re.IGNORECASE)
# A cover's title line ("FORM 10-K", "____ Form 10-Q"); a release citing "its Form 10-Q filed with ..." is not one.
# An amendment ("FORM 10-K/A") is the same form for a question.
_SEC_FORM = re.compile(
    r"\bform\s+(10-?k|10-?q|8-?k|20-?f|40-?f|6-?k|s-?1|f-?1)(?:\s*/\s*a)?[ \t]*$", re.IGNORECASE | re.MULTILINE
)
_REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.IGNORECASE)
_FILE_NUMBER = re.compile(
    r"commission\s+file\s+(?:number|no\.?)\s*:?\s*[\d-]+(?![\d-])\s*\.?[\s_]*([^\n(_]*[A-Za-z][^\n(_]*)\n",
    re.IGNORECASE,
)
_RELEASE = re.compile(
    r"^\W*([A-Z][^\n]{1,60}?)\s+(?:reports|announces|reported|announced)\b", re.MULTILINE | re.IGNORECASE
)
_TICKER = re.compile(r"\((?:NYSE|NASDAQ|Nasdaq|NYSE American|AMEX)\s*:\s*([A-Z][A-Z.]{0,5})\b")
# Since 2019 every 10-K, 10-Q and 8-K cover lists the registered securities with their "Trading Symbol(s)"
# (Form 10-K, cover page; Regulation S-K Item 10): a class's title, its symbol, then the exchange's name.
# Notes carry a symbol of their own ("MMM23", "PEP28a", "AUKF/27"); the company's symbols are the plain ones.
_SYMBOLS_TABLE = re.compile(r"trading\s+symbols?(?:\s*\(s\))?", re.IGNORECASE)
_SYMBOLS_END = re.compile(r"section\s+12\s*\(g\)|indicate\s+by\s+check", re.IGNORECASE)
_EXCHANGE = r"(?:the\s+)?(?:new\s+york\s+stock|nyse|nasdaq|chicago\s+stock|cboe|boston\s+stock|nyse\s+american)"
_LISTED_SYMBOL = re.compile(rf"(?<![\w$.])([A-Z]{{1,5}}(?:\.[A-Z])?)\s+(?i:{_EXCHANGE})")
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# A date as a filing writes it ("January 28, 2023", "Dec. 31 2022"): groups month (its first three letters), day, year
DATE = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})\s*,?\s*((?:19|20)\d\d)\b", re.I
)
_RELEASE_YEAR = re.compile(r"\b(?:fiscal|full[- ]year|quarter|year)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
_QUARTER = re.compile(
    r"\b(first|second|third|fourth|1st|2nd|3rd|4th)[- ](?:quarter\b|qtr\b\.?)|\bq([1-4])\b|\b([1-4])q(?:\d\d)?\b",
    re.IGNORECASE,
)
_FORM_TOKENS = {
    "10k": "10-K",
    "10q": "10-Q",
    "8k": "8-K",
    "20f": "20-F",
    "earnings": "earnings",
    "annual": "10-K",
}
_YEAR_TOKEN = re.compile(r"((?:19|20)\d\d)(?:q([1-4]))?")


def form_name(token: str) -> str:
    """ "10k", "10-K", "8-k" -> "10-K", "8-K"."""
    plain = re.sub(r"\W", "", token).lower()
    return _FORM_TOKENS.get(plain) or f"{plain[:-1]}-{plain[-1]}".upper()


def _name_words(name: str) -> tuple[str, ...]:
    words = [w.lower() for w in lexical.words_of(name)]
    while words and words[-1] in _SUFFIXES:
        words.pop()
    while words and words[0] in _SUFFIXES:
        words.pop(0)
    return tuple(words[:6])


# A cover's labels, read as a name where a reader moved them ("Date of Report (Date of earliest event ...)").
_LABEL_WORDS = re.compile(
    r"\b(?:date of report|earliest event|exact name|jurisdiction|telephone|identification)\b", re.I
)


def _registrant_names(head: str) -> list[str]:
    """The line above "(Exact name of registrant ...)" (several lines when a reader broke the name into
    one word a line), or the line after the commission file number where the label is missing."""
    names = []
    marker = _REGISTRANT.search(head)
    if marker:
        lines = [line.strip(" _\t") for line in head[max(0, marker.start() - 200) : marker.start()].split("\n")]
        taken: list[str] = []
        for line in reversed([line for line in lines if line]):
            if re.search(r"\d{3}|commission|file|number|washington|\bno\.", line, re.IGNORECASE):
                break
            taken.insert(0, line)
            if _name_words(" ".join(taken)):  # "SQUARE," above "INC.": a suffix alone is not yet a name
                break
        names.append(" ".join(taken))
    numbered = _FILE_NUMBER.search(head)
    if numbered:
        names.append(numbered.group(1))
    return [n for n in names if _name_words(n) and not _LABEL_WORDS.search(n)]


def _file_name_parts(file_name: str) -> tuple[list[str], set[int], str | None, int | None]:
    """A file name's company words (those before its first year or form word), years, form and quarter:
    "3M_2018_10K.pdf", "AMCOR_2023Q4_EARNINGS.pdf", "Apple 10-K 2023.pdf"."""
    stem = re.sub(r"\.[A-Za-z0-9]{1,5}$", "", file_name.rsplit("/", 1)[-1])
    tokens = [t.lower() for t in re.split(r"[\W_]+", stem) if t]
    company: list[str] = []
    years: set[int] = set()
    form = None
    quarter = None
    ended = False
    for i, token in enumerate(tokens):
        joined = token + (tokens[i + 1] if i + 1 < len(tokens) else "")
        year = _YEAR_TOKEN.fullmatch(token)
        if year:
            if not years:
                years.add(int(year.group(1)))
            quarter = quarter or (int(year.group(2)) if year.group(2) else None)
            ended = True
        elif token in _FORM_TOKENS or joined in _FORM_TOKENS:
            form = form or _FORM_TOKENS.get(token) or _FORM_TOKENS[joined]
            ended = True
        elif not ended and not token.isdigit():
            company.append(token)
    # "report.pdf" names no company: only a file name that also gives a year or a form is read as one
    return (company if ended else []), years, form, quarter


def read_identity(file_name: str, head: str) -> FilingIdentity | None:
    """The identity of a filing, from its file name and the start of its text; None when neither its
    cover (an SEC form, a results release) nor its file name (a year and a form) says it is a filing."""
    head = head[:HEAD_CHARS]
    company, years, form, quarter = _file_name_parts(file_name)
    names = _registrant_names(head)
    cover = head[:COVER_CHARS]
    sec_form = _SEC_FORM.search(cover) if re.search(r"securities\s+and\s+exchange\s+commission", cover, re.I) else None
    release = _RELEASE.search(head[:600])
    if sec_form:
        form = form_name(sec_form.group(1))
    elif release:
        form = form or "earnings"
        names.append(release.group(1))
        first_year = _RELEASE_YEAR.search(head[:600])  # "reports fiscal 2023 results and outlook for fiscal 2024"
        if first_year:
            years.add(int(first_year.group(1)))
    if form is None or not (years or sec_form):
        return None
    period_ends = set()
    for pattern in (_ANNUAL, _QUARTERLY, _CURRENT):
        ended = pattern.search(head)
        if ended:
            years.add(int(ended.group(1)))
            period_ends.add((int(ended.group(1)), _month_of(ended.group(0))))
    if quarter is None and form == "earnings":
        quarter = quarter_of(head[:600])
    tickers = set(_TICKER.findall(head)) | trading_symbols(head)
    all_names = {_name_words(n) for n in names} | ({tuple(company)} if company else set())
    return FilingIdentity(
        names=tuple(sorted(n for n in all_names if n)),
        tickers=frozenset(tickers),
        years=frozenset(years),
        form=form,
        quarter=quarter,
        period_ends=frozenset(period_ends),
        company=" ".join(names[0].split()).strip(" ,") if names else (" ".join(company).upper() or None),
    )


def trading_symbols(head: str) -> set[str]:
    """The company's symbols in a cover's table of registered securities ("Common Stock, par value $.01
    per share MMM New York Stock Exchange"), without those of its notes ("MMM23")."""
    table = _SYMBOLS_TABLE.search(head)
    if table is None:
        return set()
    rows = head[table.end() :]
    end = _SYMBOLS_END.search(rows)
    rows = " ".join(rows[: end.start() if end else 1500].split())  # PDF text breaks a row anywhere
    return set(_LISTED_SYMBOL.findall(rows))


def _month_of(text: str) -> int:
    """The month a period-end phrase names ("... ended December 31, 2018" -> 12)."""
    found = re.search(r"\b(" + "|".join(MONTHS) + r")[a-z]*\.?\s+\d", text, re.IGNORECASE)
    return MONTHS.index(found.group(1).lower()) + 1 if found else 0


def quarter_of(text: str) -> int | None:
    found = _QUARTER.search(text)
    if not found:
        return None
    word, q, nq = found.groups()
    return _QUARTER_WORDS[word.lower()] if word else int(q or nq)
