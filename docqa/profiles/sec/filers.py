"""Which filings a question is about: the filers it names (by name, trading symbol or initials) and, among
their filings, those of the period and form it asks about.

Every filing's identity (company names, symbols, fiscal years, form, quarter, period ends) is read from its
cover and file name when it is indexed (docqa.profiles.sec.covers) and kept by the store; here a question is
matched against them. A question that names a company narrows the search to that company's filings, then to
those reporting on the latest fiscal year it names, then to its period end, quarter and form, each step only
where some filing is left; the keyword search then takes its best-scoring document among those. Documents
that are not filings (contracts, judgments) have no identity and are never chosen this way.

Pure functions of the question's text and the identities.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from docqa.core.identity import DocumentIdentity
from docqa.profiles.sec.identity import FilingIdentity
from docqa.profiles.sec.periods import AskedPeriod, asked_period
from docqa.store.keyword import lexical

# Forms that serve one purpose for different filers: a foreign private issuer's annual report is its 20-F
# (a Canadian one's, 40-F) and its current reports are 6-Ks; "the annual report" (read as 10-K) means those.
SAME_PURPOSE = {"10-K": {"10-K", "20-F", "40-F", "annual report"}, "8-K": {"8-K", "6-K"}}


def named_filings(question: str, asked: AskedPeriod, identities: Mapping[int, FilingIdentity]) -> frozenset[int]:
    """The filings (document IDs) a question is about: empty when it names no company that filed one of them."""
    read = QuestionWords.of(question)  # split once, matched against every filing's names
    found = {doc: how_named(read, identity) for doc, identity in identities.items()}
    # "American Water Works" names that company whole, and American Express by its first word only: another
    # company's. ("Adobe" names Adobe Inc. whole and its older filings' Adobe Systems by the first word: one.)
    longer = [name for strength, name in found.values() if strength == WHOLE and len(name) > 1]
    named = {
        doc: identity
        for doc, identity in identities.items()
        if found[doc][0] and not (found[doc][0] == FIRST_WORD and _another_name(found[doc][1], longer))
    }
    # A company is one company in all its filings: named by a symbol that only its newer covers list
    # (covers carry trading symbols since 2019), its older filings are named too.
    names = {name for identity in named.values() for name in identity.names}
    named |= {doc: identity for doc, identity in identities.items() if names & set(identity.names)}
    return _of_period(named, asked)


def period_filings(
    question_filings: frozenset[int], asked: AskedPeriod, identities: Mapping[int, FilingIdentity]
) -> frozenset[int]:
    """Where a question names no company (`question_filings` empty) but a fiscal year or period end: the
    filings, any company's, that report on it (narrowed by quarter and form as `named_filings` narrows);
    empty where it names a company, no period, or no filing reports on the period."""
    if question_filings:
        return frozenset()
    of_year = {
        doc: identity
        for doc, identity in identities.items()
        if asked.latest_year in identity.years or asked.period_end in identity.period_ends
    }
    if not of_year or len(of_year) == len(identities):
        return frozenset()
    return _of_period(of_year, asked)


def _of_period(named: dict[int, FilingIdentity], asked: AskedPeriod) -> frozenset[int]:
    """`named` narrowed to the latest fiscal year asked, then its period end, quarter and form, each step
    only where some filing is left. The year first as filers name it where their text says ("fiscal 2022"
    for a year that ended January 28, 2023, which the cover dates 2023), then as any date or name gives it."""
    checks: list[Callable[[FilingIdentity], bool]] = []
    if asked.latest_year is not None:
        checks.append(lambda identity: asked.latest_year in identity.fiscal_years)
        checks.append(lambda identity: asked.latest_year in identity.years)
        if not any(asked.latest_year in identity.years for identity in named.values()):
            checks += _comparative_years(asked.latest_year)
    if asked.period_end is not None:
        checks.append(lambda identity: asked.period_end in identity.period_ends)
    if asked.quarter is not None:
        checks.append(lambda identity: identity.quarter == asked.quarter)
    if asked.form is not None:
        forms = SAME_PURPOSE.get(asked.form, {asked.form})
        checks.append(lambda identity: identity.form in forms)
    for check in checks:
        narrowed = {doc: identity for doc, identity in named.items() if check(identity)}
        if narrowed:
            named = narrowed
    if asked.most_recent and asked.latest_year is None and asked.period_end is None:
        named = _newest_of_each_filer(named)
    return frozenset(named)


def _comparative_years(year: int) -> list[Callable[[FilingIdentity], bool]]:
    """Where no filing reports on the year asked, those that show it in their comparative columns: an annual
    report's balance sheets cover two year ends and its statements of income and cash flows three years
    (Regulation S-X Rules 3-01 and 3-02), so the next year's report shows it, else the one after."""
    return [
        lambda identity: (year + 1) in identity.years and min(identity.years) >= year + 1,
        lambda identity: (year + 2) in identity.years and min(identity.years) >= year + 1,
    ]


def _newest_of_each_filer(named: dict[int, FilingIdentity]) -> dict[int, FilingIdentity]:
    """Each filer's filings that report on its latest period ("last year", "the latest 10-K"), by their period
    ends (else their years); a filer is told by its names."""

    def newest(identity: FilingIdentity) -> tuple[int, int]:
        return max(identity.period_ends, default=(max(identity.years, default=0), 0))

    latest: dict[tuple[tuple[str, ...], ...], tuple[int, int]] = {}
    for identity in named.values():
        latest[identity.names] = max(latest.get(identity.names, (0, 0)), newest(identity))
    return {doc: identity for doc, identity in named.items() if newest(identity) == latest[identity.names]}


def named_in(question: str, identity: FilingIdentity) -> bool:
    """Whether a question names the filer (`how_named`)."""
    return how_named(QuestionWords.of(question), identity)[0] > 0


_GLUED_SUFFIXES = ("co", "corp", "inc")  # corporate suffixes a name may run into itself ("PepsiCo")
# How closely a question names a filer (how_named): a symbol or a whole name; initials or a clipped name;
# only the first word of a longer name.
WHOLE, SHORTENED, FIRST_WORD = 3, 2, 1


def _another_name(first_word_of: tuple[str, ...], named_whole: list[tuple[str, ...]]) -> bool:
    """Whether the name a question gives only the first word of is another company's than the longer names it
    gives whole: neither is the start of the other ("american express" against "american water works")."""
    return bool(named_whole) and all(
        first_word_of[: len(other)] != other and other[: len(first_word_of)] != first_word_of for other in named_whole
    )


@dataclass(frozen=True)
class QuestionWords:
    """A question as `how_named` reads it, split once for all the filings it is matched against."""

    text: str
    words: tuple[str, ...]
    lowered: tuple[str, ...]
    caseless: bool  # written without any capital

    @classmethod
    def of(cls, question: str) -> QuestionWords:
        words = tuple(lexical.words_of(question))
        return cls(question, words, tuple(w.lower() for w in words), not any(c.isupper() for c in question))


def how_named(read: QuestionWords, identity: FilingIdentity) -> tuple[int, tuple[str, ...]]:
    """How closely a question names the filer (0 where it does not), and by which of its names: a run of its words that
    is one of the filer's names, whole ("Best Buy", "Activision Blizzard"), joined ("BESTBUY" in a file name for
    "Best Buy", "Walmart" for "Wal-Mart Stores", "Pepsi" for "PepsiCo"), the first word of a longer name ("Adobe"
    for "Adobe Systems"), or that word split ("JP Morgan" for "JPMorgan Chase"), starting with a capital or a digit
    as a name does ("the best quarter" is not Best Buy; "eBay" is eBay), or with "and" for its "&" ("Johnson and
    Johnson"); the initials of a name joined by "&" ("J&J", "P&G"); its first two words clipped and joined
    ("AmEx" for "American Express"); or its trading symbol: as written in capitals, or in any case when it has
    three letters or more and is no common word ("mmm", "Amzn"). A question written without any capital names a
    filer by a whole name only ("best buy", "walmart", "pepsi"), never by a first word alone."""
    question, words, lowered, caseless = read.text, read.words, read.lowered, read.caseless
    if any(_symbol_in(question, symbol) for symbol in identity.tickers):
        return WHOLE, ()
    # Written without capitals ("what was walmart's revenue in 2020?"), a question still names a filer, by its
    # name whole only: a lone first word ("general", "american", "best") is no name without its capital.
    found: tuple[int, tuple[str, ...]] = (0, ())
    for name in identity.names:
        if len(name) == 1 and lexical.is_cjk(name[0]):
            if len(name[0]) >= 2 and name[0] in question:  # a Chinese name, as written: no spaces to split at
                return WHOLE, name
            continue
        if _initials_in(question, name) or _clipped_in(words, name):
            found = max(found, (SHORTENED, name))
        whole = _whole_forms(name)
        for i, word in enumerate(words):
            if not (_written_as_a_name(word) or (caseless and not lexical.is_stopword(lowered[i]))):
                continue
            if tuple(lowered[i : i + len(name)]) == name or _with_and(lowered, i, name):
                return WHOLE, name
            if any("".join(lowered[i : i + n]) in whole for n in (1, 2, 3)):
                # its first word alone is one of the joined forms too ("Adobe" for "Adobe Systems")
                found = max(found, (WHOLE if len(name) == 1 or lowered[i] != name[0] else FIRST_WORD, name))
            elif len(name) > 1 and lowered[i] == name[0] and len(name[0]) >= 3:
                found = max(found, (FIRST_WORD, name))
    return (0, ()) if caseless and found[0] < WHOLE else found


def _written_as_a_name(word: str) -> bool:
    """A word that starts as a name does: a capital or a digit ("Best", "3M"), or a capital after a small
    first letter ("eBay", "iRobot")."""
    return word[:1].isupper() or word[:1].isdigit() or any(c.isupper() for c in word[1:])


def _with_and(lowered: Sequence[str], i: int, name: tuple[str, ...]) -> bool:
    """ "Johnson and Johnson" at word i for "Johnson & Johnson", whose "&" a name's words leave out."""
    run = tuple(lowered[i : i + len(name) + 1])
    return any(run == (*name[:k], "and", *name[k:]) for k in range(1, len(name)))


def _whole_forms(name: tuple[str, ...]) -> set[str]:
    """A name written as one word: all of it joined, its leading words joined ("Walmart" for "Wal-Mart
    Stores"), its first word; and a one-word name with a corporate suffix run into it, without the suffix
    ("Pepsi" for "PepsiCo"), where four letters or more are left (fewer read as a word or a symbol: "Sys")."""
    forms = {"".join(name[:k]) for k in range(1, len(name) + 1)}
    if len(name) == 1:
        forms |= {name[0][: -len(s)] for s in _GLUED_SUFFIXES if name[0].endswith(s) and len(name[0]) - len(s) >= 4}
    return forms


def _symbol_in(question: str, symbol: str) -> bool:
    """A symbol as written in capitals; with three letters or more also capitalised ("Amzn"), and in
    lowercase only when it has no vowel ("jpm", "msft"): a lowercase "low" or "key" is a word, not Lowe's."""
    if symbol.isdigit():  # a stock code ("600795"), next to Chinese text or not
        return re.search(rf"(?<!\d){symbol}(?!\d)", question) is not None
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
    initials, joined by "&", the question writes in capitals; "AMD" for "Advanced Micro Devices", "IBM": a name
    of three words or more whose initials, run together, it writes as a word in capitals."""
    if len(name) < 2 or len(name) > 4 or any(not w[:1].isalpha() for w in name):
        return False
    letters = [w[0].upper() for w in name if w not in ("and", "of")]
    forms = ["&".join(letters)] + (["".join(letters)] if len(letters) >= 3 else [])
    return any(
        len(form) >= 3 and re.search(rf"(?<![\w&]){re.escape(form)}(?![\w&])", question) is not None for form in forms
    )


def _clipped_in(words: Sequence[str], name: tuple[str, ...]) -> bool:
    """ "AmEx" for "American Express", "FedEx" for "Federal Express": a capitalised word of four letters or
    more made of the starts (two letters or more each) of a name's first two words, shorter than both
    joined ("AmericanExpress" is the joined form, `_whole_forms`)."""
    if len(name) < 2 or not (name[0].isalpha() and name[1].isalpha()):
        return False
    first, second = name[0], name[1]
    for word in words:
        lowered = word.lower()
        if not word[:1].isupper() or len(lowered) < 4 or len(lowered) >= len(first) + len(second):
            continue
        if any(
            lowered == first[:a] + second[: len(lowered) - a]
            for a in range(2, min(len(first), len(lowered) - 2) + 1)
            if len(lowered) - a <= len(second)
        ):
            return True
    return False


def filing_hints(
    question: str, identities: Mapping[int, DocumentIdentity] | None
) -> tuple[frozenset[int], frozenset[int]]:
    """The filings a question names (named_filings) and, where it names none, those of the period it names
    (period_filings), among `identities` (one profile's filings in the collection searched; None: none)."""
    filings = {doc: i for doc, i in (identities or {}).items() if isinstance(i, FilingIdentity)}
    if not filings:
        return frozenset(), frozenset()
    period = asked_period(question)
    named = named_filings(question, period, filings)
    return named, period_filings(named, period, filings)


def without_names(question: str, names: Sequence[tuple[str, ...]]) -> str:
    """The question with each of these names (lowercased words, as identities hold them) blanked out wherever it
    is written, in any case, as whole words ("What did Best Buy buy?" -> "What did   buy?")."""
    for name in sorted(set(names), key=len, reverse=True):
        if name:
            pattern = r"(?<![\w&])" + r"[\s.,'-]+".join(re.escape(word) for word in name) + r"(?![\w&])"
            question = re.sub(pattern, lambda m: " " * len(m.group(0)), question, flags=re.IGNORECASE)
    return question
