"""A filing's identity (who filed it, which form, which fiscal period) read from its cover page and file
name, and the period a question asks about.

A question about a filing names its company and usually its fiscal year ("What is the FY2018 capital
expenditure amount for 3M?"). BM25 over 40 filings does not read it that way: an earnings release, short
and dense with the same financial words, outranks the 10-K the question names (financebench_dev, all 40
filings searched: 33 of 68 questions' first-pass document was another company's filing or another year's).
Company names are single words the titles' naming runs (docqa.store.keyword.titles) leave alone, and a
fiscal year is not a title word at all. So a filing's identity is read here, from what every SEC filing
and press release prints on its first page ("For the fiscal year ended December 31, 2018", the line above
"(Exact name of registrant as specified in its charter)", "Amcor reports fiscal 2023 results",
"(NYSE: MGM)") and from its file name ("3M_2018_10K.pdf"); docqa.store.keyword.filing_choice uses it.

Pure functions of text: no database, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docqa.store.keyword import lexical

COVER_CHARS = 1500  # where a cover's title sits ("FORM 10-K"); a results release may cite a 10-Q further on
HEAD_CHARS = 5000  # a cover page: the 10-Ks of financebench_dev name their registrant within 1,600 characters
# Words that say what kind of company, not which: "Best Buy Co., Inc." is named "Best Buy".
_SUFFIX_WORDS = "inc incorporated corp corporation co company companies ltd limited plc llc lp nv sa ag se holdings"
_SUFFIXES = frozenset([*_SUFFIX_WORDS.split(), "group", "the"])
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE_YEAR = rf"{_MONTH}\s+\d{{1,2}}\s*,?\s*((?:19|20)\d\d)"
_ANNUAL = re.compile(rf"fiscal\s+year\s+ended\s*:?\s*{_DATE_YEAR}", re.IGNORECASE)
_QUARTERLY = re.compile(rf"quarterly\s+period\s+ended\s*:?\s*{_DATE_YEAR}", re.IGNORECASE)
_CURRENT = re.compile(rf"date\s+of\s+report[^:]{{0,60}}:\s*{_DATE_YEAR}", re.IGNORECASE)
# A cover's title line ("FORM 10-K", "____ Form 10-Q"); a release citing "its Form 10-Q filed with ..." is not one.
_SEC_FORM = re.compile(r"\bform\s+(10-?k|10-?q|8-?k|20-?f|40-?f|6-?k|s-?1|f-?1)[ \t]*$", re.IGNORECASE | re.MULTILINE)
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
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_RELEASE_YEAR = re.compile(r"\b(?:fiscal|full[- ]year|quarter|year)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_QUARTER = re.compile(r"\b(first|second|third|fourth)[- ]quarter\b|\bq([1-4])\b|\b([1-4])q(?:\d\d)?\b", re.IGNORECASE)
_FORM_TOKENS = {
    "10k": "10-K",
    "10q": "10-Q",
    "8k": "8-K",
    "20f": "20-F",
    "earnings": "earnings",
    "annual": "10-K",
}
_YEAR_TOKEN = re.compile(r"((?:19|20)\d\d)(?:q([1-4]))?")
# The question's side. "FY2018", "FY 18", "fiscal 2018", "fiscal year 2018", "2018财年", "2018年度", a bare year.
_ASKED_YEAR = re.compile(
    r"\bfy\s*'?(\d{4}|\d{2})(?!\d)|\bfiscal\s+(?:year\s+)?((?:19|20)\d\d)\b|((?:19|20)\d\d)\s*(?:财年|年度|年)"
    r"|\b((?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_ASKED_FORM = re.compile(
    r"\b(10-?k|10-?q|8-?k|20-?f)\b|(annual report)|(quarterly report)|(current report)"
    r"|((?:earnings|press|results) (?:release|report|announcement|call))|(proxy statement|def 14a)",
    re.IGNORECASE,
)
_SPLIT_PERIOD = re.compile(r"\b(q[1-4]|fy\s*'?\d{2,4})(fy|q[1-4]|')", re.IGNORECASE)
_SHORT_YEAR = re.compile(r"\bq[1-4]\s*'(\d\d)\b|\b[1-4]q(\d\d)\b|\b[12]h(\d\d)\b", re.IGNORECASE)
_HALF = re.compile(r"\b(?:first|1st)\s+half\b|\bh1\b|\b1h(?:\d\d)?\b|\bsix[- ]months?\b|\bsemi-?annual", re.I)
_ASKED_DATE = re.compile(
    r"\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)\.?\s+(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?((?:19|20)\d\d)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FilingIdentity:
    """What a filing's cover page and file name say about it."""

    names: tuple[tuple[str, ...], ...]  # the company's names, lowercased words, corporate suffixes dropped
    tickers: frozenset[str]  # "MGM", "PEP": matched in a question only as written, in capitals
    years: frozenset[int]  # every fiscal year it may be reporting on (period end, "fiscal 2022", file name)
    form: str | None  # "10-K", "10-Q", "8-K", "20-F", "earnings"
    quarter: int | None
    period_ends: frozenset[tuple[int, int]] = frozenset()  # (year, month) of the period or event it reports
    company: str | None = None  # the name as the cover writes it ("BEST BUY CO., INC."), for people to read


@dataclass(frozen=True)
class AskedPeriod:
    """The period and form a question names."""

    latest_year: int | None
    quarter: int | None
    form: str | None
    period_end: tuple[int, int] | None = None  # (year, month): "as of June 30, 2023", "the quarter ended July 2023"


def _form_name(token: str) -> str:
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
        form = _form_name(sec_form.group(1))
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
        quarter = _quarter_of(head[:600])
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
    found = re.search(r"\b(" + "|".join(_MONTHS) + r")[a-z]*\.?\s+\d", text, re.IGNORECASE)
    return _MONTHS.index(found.group(1).lower()) + 1 if found else 0


def _quarter_of(text: str) -> int | None:
    found = _QUARTER.search(text)
    if not found:
        return None
    word, q, nq = found.groups()
    return _QUARTER_WORDS[word.lower()] if word else int(q or nq)


def asked_period(question: str) -> AskedPeriod:
    """The latest fiscal year a question names (a question comparing FY2019 with FY2020 is answered by
    the FY2020 filing, which reports both), its quarter, the form it names and a period-end month, if any.
    Periods are written many ways: "Q2 of FY2024", "2021 Q1", "Q2'23", "2Q23", "Q2FY23", "FY23", "the
    second quarter of fiscal 2023", "first half of 2023" / "H1 2023" (a half ends with the second quarter,
    "nine months" with the third), "the quarter ended June 30, 2023"."""
    spaced = _SPLIT_PERIOD.sub(r"\1 \2", question)  # "Q2FY23" -> "Q2 FY23", "FY2023Q1" -> "FY2023 Q1"
    years = []
    for fy, fiscal, cjk, bare in _ASKED_YEAR.findall(spaced):
        if fy:
            years.append(int(fy) + (2000 if len(fy) == 2 else 0))
        else:
            years.append(int(fiscal or cjk or bare))
    years += [2000 + int(next(y for y in found.groups() if y)) for found in _SHORT_YEAR.finditer(spaced)]
    quarter = _quarter_of(re.sub(r"\bfy\s*\d{2,4}", " ", spaced, flags=re.IGNORECASE).replace("FY", " "))
    quarter = quarter or _half_or_nine_months(spaced)
    dated = _ASKED_DATE.search(spaced)
    period_end = None
    if dated:
        period_end = (int(dated.group(2)), _MONTHS.index(dated.group(1)[:3].lower()) + 1)
        years.append(period_end[0])
    return AskedPeriod(max(years) if years else None, quarter, _asked_form(spaced), period_end)


def _asked_form(question: str) -> str | None:
    found = _ASKED_FORM.search(question)
    if not found:
        return None
    sec, annual, quarterly, current, release, _ = found.groups()
    if sec:
        return _form_name(sec)
    return "10-K" if annual else "10-Q" if quarterly else "8-K" if current else "earnings" if release else "proxy"


def _half_or_nine_months(question: str) -> int | None:
    if _HALF.search(question):
        return 2
    return 3 if re.search(r"\bnine[- ]months?\b|\b9[- ]?m\b", question, re.IGNORECASE) else None


def named_in(question: str, identity: FilingIdentity) -> bool:
    """Whether a question names the filer: a run of its words that is one of the filer's names, whole
    ("Best Buy", "Activision Blizzard"), joined ("BESTBUY" in a file name for "Best Buy"), the first word
    of a longer name ("Adobe" for "Adobe Systems"), or that word split ("JP Morgan" for "JPMorgan Chase"),
    starting with a capital or a digit as a name does ("the best quarter" is not Best Buy); the initials
    of a name joined by "&" ("J&J", "P&G"); or its trading symbol: as written in capitals, or in any case
    when it has three letters or more and is no common word ("mmm", "Amzn")."""
    if any(_symbol_in(question, symbol) for symbol in identity.tickers):
        return True
    words = lexical.words_of(question)
    lowered = [w.lower() for w in words]
    for name in identity.names:
        if _initials_in(question, name):
            return True
        joined = "".join(name)
        for i, word in enumerate(words):
            if not (word[:1].isupper() or word[:1].isdigit()):
                continue
            if tuple(lowered[i : i + len(name)]) == name:
                return True
            if any("".join(lowered[i : i + n]) in (joined, name[0]) for n in (1, 2, 3)):
                return True
            if len(name) > 1 and lowered[i] == name[0] and len(name[0]) >= 3:
                return True
    return False


def _symbol_in(question: str, symbol: str) -> bool:
    """A symbol as written in capitals; with three letters or more also capitalised ("Amzn"), and in
    lowercase only when it has no vowel ("jpm", "msft"): a lowercase "low" or "key" is a word, not Lowe's."""
    if re.search(rf"(?<![\w.]){re.escape(symbol)}\b", question):
        return True
    if len(symbol) < 3 or lexical.is_stopword(symbol.lower()):
        return False
    for found in re.finditer(rf"(?<![\w.]){re.escape(symbol)}\b", question, re.IGNORECASE):
        written = found.group()
        if written[0].isupper() or not re.search(r"[aeiou]", written, re.IGNORECASE):
            return True
    return False


def _initials_in(question: str, name: tuple[str, ...]) -> bool:
    """ "J&J" for "Johnson & Johnson", "P&G" for "Procter & Gamble": a name of two words or more whose
    initials, joined by "&", the question writes in capitals."""
    if len(name) < 2 or len(name) > 4 or any(not w[:1].isalpha() for w in name):
        return False
    initials = "&".join(w[0] for w in name if w not in ("and", "of")).upper()
    return initials.count("&") >= 1 and re.search(rf"(?<!\w){re.escape(initials)}(?!\w)", question) is not None
