"""A question's period and the filers it names (docqa.retrieval.understanding), against identities read
from real cover layouts: pure text, no store."""

from __future__ import annotations

import pytest

from docqa.profiles.sec.covers import FilingIdentity, read_identity
from docqa.profiles.sec.filers import named_filings, named_in, period_filings
from docqa.profiles.sec.periods import AskedPeriod, asked_period
from tests.store.test_filings import COVER_WITH_SYMBOLS, TEN_K
from tests.support.profiles import understand


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("What is the FY2019 - FY2020 total revenue growth rate for Block?", AskedPeriod(2020, None, None)),
        ("Was there any drop in cash between FY 2023 and Q2 of FY2024?", AskedPeriod(2024, 2, None)),
        ("As of FY2023Q1, why did Pepsico raise guidance?", AskedPeriod(2023, 1, None)),
        ("What was the FY18 capex?", AskedPeriod(2018, None, None)),
        ("What was capex in fiscal '22?", AskedPeriod(2022, None, None)),
        ("How many units in fiscal 22?", AskedPeriod(None, None, None)),  # a bare two-digit number is no year
        ("公司2018财年的营业收入是多少？", AskedPeriod(2018, None, None)),
        (
            "What was the key agenda of the AMCOR's 8k filing dated 1st July 2022?",
            AskedPeriod(2022, None, "8-K", (2022, 7)),
        ),
        ("Which debt securities are registered as of Q2 of 2023?", AskedPeriod(2023, 2, None)),
        ("What was the revenue in 2021 Q1?", AskedPeriod(2021, 1, None)),
        ("What was the revenue in 2021Q1?", AskedPeriod(2021, 1, None)),
        ("CY2021 revenue by segment", AskedPeriod(2021, None, None)),
        ("Operating margin in the 3rd quarter of 2022", AskedPeriod(2022, 3, None)),
        ("Cash at the end of 2023H1?", AskedPeriod(2023, 2, None)),
        ("How did Q2'23 margins move?", AskedPeriod(2023, 2, None)),
        ("2Q23 net sales and Q3FY22 sales", AskedPeriod(2023, 2, None)),
        ("What did the Q22023 release say about margins?", AskedPeriod(2023, 2, None)),  # run together
        ("Net sales in 2Q2023", AskedPeriod(2023, 2, None)),
        ("Gross margin in Q3-22 and Q4/22", AskedPeriod(2022, 3, None)),
        ("Cash at the end of H1 2023?", AskedPeriod(2023, 2, None)),
        ("Sales in the first half of fiscal 2024", AskedPeriod(2024, 2, None)),
        ("Revenue for the nine months ended September 30, 2022", AskedPeriod(2022, 3, None, (2022, 9))),
        ("In its quarterly report for the quarter ended June 30, 2023", AskedPeriod(2023, None, "10-Q", (2023, 6))),
        ("What did the earnings release for FY23 say?", AskedPeriod(2023, None, "earnings")),
        ("What is the FY2019 earnings per share?", AskedPeriod(2019, None, None)),  # EPS is not a release
        ("Net sales in FY2022/23 against FY2021/22", AskedPeriod(2023, None, None)),
        ("Capital spending in fiscal year 2022-23", AskedPeriod(2023, None, None)),
        ("Revenue for 1999–00", AskedPeriod(2000, None, None)),
        ("Cash as of 2022-08-31 and the 2022/2023 plan", AskedPeriod(2023, None, None, (2022, 8))),  # a date, no span
        ("Gross margin in the 3rd qtr. of 2022", AskedPeriod(2022, 3, None)),
        ("What did the 8-K dated 2022-08-19 announce?", AskedPeriod(2022, None, "8-K", (2022, 8))),
        ("What did the 8-K filed on 8/19/2022 announce?", AskedPeriod(2022, None, "8-K", (2022, 8))),
        ("What was Walmart's revenue last year?", AskedPeriod(None, None, "10-K", None, True)),
        ("What was Walmart's revenue in the most recent quarter?", AskedPeriod(None, None, None, None, True)),
        ("What does the latest 10-K say about leases?", AskedPeriod(None, None, "10-K", None, True)),
        ("Revenue in FY2022 against last year", AskedPeriod(2022, None, None)),  # a year named: that one
        ("Which law governs the agreement?", AskedPeriod(None, None, None)),
    ],
)
def test_asked_period(question: str, period: AskedPeriod) -> None:
    assert asked_period(question) == period


def test_a_question_names_a_company_as_a_name_is_written() -> None:
    best_buy = read_identity("BESTBUY_2023_10K.pdf", TEN_K)
    assert best_buy is not None
    assert named_in("Are Best Buy's gross margins historically consistent?", best_buy)
    assert named_in("What is BESTBUY's FY2023 revenue?", best_buy)
    assert not named_in("Which product category performed the best?", best_buy)  # not capitalised
    adobe = read_identity("report.pdf", TEN_K.replace("BEST BUY CO., INC.", "ADOBE SYSTEMS INCORPORATED"))
    assert adobe is not None and named_in("Does Adobe have an improving operating margin?", adobe)
    release = read_identity(
        "r.pdf", "MGM Resorts International reports full year 2022 results\nMGM Resorts (NYSE: MGM) today"
    )
    assert release is not None and release.tickers == {"MGM"}
    assert named_in("What was MGM's interest coverage ratio in 2022?", release)
    assert not named_in("What was the interest coverage ratio of Caesars?", release)


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What was JNJ's revenue in Q2 2023?", True),
        ("What was jnj's revenue?", True),  # a symbol with no vowel is no English word: any case
        ("Did J&J raise its guidance?", True),  # the initials of a name joined by "&"
        ("Johnson & Johnson cash at June 30, 2023", True),
        ("Johnson and Johnson cash at June 30, 2023", True),  # its "&" written as a word
        ("What was Pfizer's revenue?", False),
    ],
)
def test_a_question_names_a_company_by_symbol_initials_or_name(question: str, named: bool) -> None:
    identity = read_identity("jnj-10q.pdf", COVER_WITH_SYMBOLS)
    assert identity is not None and named_in(question, identity) is named


@pytest.mark.parametrize(
    ("cover_name", "question", "named"),
    [
        ("WAL-MART STORES, INC.", "What was Walmart's revenue in FY2018?", True),  # the name since 2018
        ("PEPSICO, INC.", "Did Pepsi raise its guidance?", True),
        ("PEPSICO, INC.", "Did Pepsi Bottling raise its prices?", True),  # a run that starts with it: named
        ("WAL-MART STORES, INC.", "What did Walgreens report?", False),
        ("SYSCO CORPORATION", "What did Sys report?", False),  # too short a rest to be the name
        ("MEDICOCORP", "What did Medico report?", True),  # another corporate suffix run into a name
        ("AMERICAN EXPRESS COMPANY", "What was AmEx's net interest income in 2022?", True),  # clipped, joined
        ("AMERICAN EXPRESS COMPANY", "What did AMEX report for 2022?", True),
        ("AMERICAN EXPRESS COMPANY", "What did the Amex card cost?", True),
        ("AMERICAN EXPRESS COMPANY", "What did the Americas segment report?", False),  # "Americ" + "as"? no
        ("AMERICAN EXPRESS COMPANY", "What did amex report?", False),  # a name starts with a capital
        ("GENERAL MILLS, INC.", "What did Gemini report?", False),
        ("EBAY INC.", "What was eBay's revenue in FY2022?", True),  # a capital after a small first letter
        ("ADVANCED MICRO DEVICES, INC.", "What was AMD's gross margin in FY2015?", True),  # initials run together
        ("ADVANCED MICRO DEVICES, INC.", "What was amd's gross margin in FY2015?", False),  # in capitals only
        ("GENERAL MILLS, INC.", "What did GM report?", False),  # two words: too short to be sure
        # written without any capital: a whole name names its filer, a first word alone does not
        ("WAL-MART STORES, INC.", "what was walmart's revenue in fy2020?", True),
        ("BEST BUY CO., INC.", "what was best buy's revenue in fy2023?", True),
        ("BEST BUY CO., INC.", "which product category performed the best?", False),
        ("GENERAL MILLS, INC.", "what were general mills' sg&a expenses?", True),
        ("GENERAL MILLS, INC.", "what were the general and administrative expenses?", False),
        ("AMERICAN EXPRESS COMPANY", "what did north american sales do in 2022?", False),
        ("EBAY INC.", "Did the bay area stores grow?", False),
    ],
)
def test_a_name_written_as_one_word(cover_name: str, question: str, named: bool) -> None:
    identity = read_identity("x.pdf", TEN_K.replace("BEST BUY CO., INC.", cover_name))
    assert identity is not None and named_in(question, identity) is named


def test_a_foreign_filers_annual_and_current_reports_are_its_20f_and_6ks() -> None:
    def filing(form: str, year: int) -> FilingIdentity:
        return FilingIdentity(names=(("acme", "mining"),), tickers=frozenset({"ACM"}), years=frozenset({year}),
                              form=form, quarter=None)  # fmt: skip

    filings = {1: filing("20-F", 2023), 2: filing("6-K", 2023), 3: filing("20-F", 2022)}
    asks = {
        "What did ACM's 2023 annual report say about reserves?": {1},
        "What did ACM announce in its 6-K of 2023?": {2},
        "Which current report did Acme Mining file in 2023?": {2},
        "What did ACM's 20-F for 2022 say?": {3},
    }
    for question, chosen in asks.items():
        assert named_filings(question, asked_period(question), filings) == chosen, question


def test_a_question_naming_a_period_but_no_company_gets_the_filings_of_that_period() -> None:
    def filing(name: str, form: str, years: set[int], quarter: int | None = None) -> FilingIdentity:
        return FilingIdentity(names=((name,),), tickers=frozenset(), years=frozenset(years), form=form,
                              quarter=quarter)  # fmt: skip

    filings = {
        1: filing("acme", "10-K", {2017}),
        2: filing("acme", "10-K", {2023}),
        3: filing("acme", "10-Q", {2023, 2024}, quarter=2),
        4: filing("zenith", "earnings", {2023}, quarter=4),
    }
    asks = {
        "What drove the reduction in SG&A expense as a percent of net sales in FY2023?": {2, 3, 4},
        "Was there any drop in cash between FY 2023 and Q2 of FY2024?": {3},
        "What did the 2023 annual report say about competition?": {2},
        "What did Acme say about competition in 2023?": set(),  # it names its company: named_filings decides
        "What does the supply agreement say about termination?": set(),  # no period
        "What was revenue in 2030?": set(),  # no filing reports on it
    }
    for question, expected in asks.items():
        asked = asked_period(question)
        assert period_filings(named_filings(question, asked, filings), asked, filings) == expected, question
    every_one = {1: filings[2], 2: filings[4]}  # all of them report on 2023: nothing to narrow
    assert period_filings(frozenset(), asked_period("revenue in 2023"), every_one) == frozenset()


def test_a_company_named_whole_is_not_another_sharing_its_first_word() -> None:
    def filing(names: tuple[tuple[str, ...], ...], year: int = 2022) -> FilingIdentity:
        return FilingIdentity(names=names, tickers=frozenset(), years=frozenset({year}), form="10-K", quarter=None)

    water, express = filing((("american", "water", "works"),)), filing((("american", "express"),))
    old_adobe, adobe = filing((("adobe", "systems"),), 2015), filing((("adobe",),), 2022)
    filings = {1: water, 2: express, 3: old_adobe, 4: adobe}
    asks = {
        "What was American Water Works's capital expenditure in FY2022?": {1},
        "What was American Express's net interest income in FY2022?": {2},
        "What did American report for FY2022?": {1, 2},  # the first word alone names both
        "What was Adobe's revenue in FY2015?": {3},  # "Adobe": Adobe Inc. whole, Adobe Systems by its first word
    }
    for question, chosen in asks.items():
        assert named_filings(question, asked_period(question), filings) == chosen, question


def test_a_lowercase_word_is_not_a_symbol() -> None:
    lowes = read_identity("lowes.pdf", COVER_WITH_SYMBOLS.replace("JNJ", "LOW").replace("JOHNSON & JOHNSON", "LOWES"))
    assert lowes is not None and lowes.tickers == {"LOW"}
    assert named_in("What was LOW's gross margin?", lowes)
    assert not named_in("Which segment had a low gross margin?", lowes)
    jpm = read_identity("JPM_2022_10K.pdf", TEN_K.replace("BEST BUY CO., INC.", "JPMORGAN CHASE & CO."))
    assert jpm is not None and named_in("What is JP Morgan's CET1 ratio?", jpm)  # the first word, split


def test_no_function_of_the_store_reads_the_questions_text() -> None:
    """The question is understood once, here; the store takes the Query (issue 39's contract)."""
    import ast
    from pathlib import Path

    import docqa.store

    root = Path(docqa.store.__file__).parent
    found = [
        f"{path.relative_to(root)}:{node.lineno} {node.name}"
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(arg.arg == "question" for arg in [*node.args.args, *node.args.kwonlyargs])
    ]
    assert len(list(root.rglob("*.py"))) > 20 and found == []


def test_a_question_asking_why_a_line_changed_is_no_statement_question() -> None:
    why = understand("What drove the change in 3M's operating margin in FY2022?")
    assert [f.titles for f in why.favoured] == [("results of operations",)] and why.head == "never"
    assert why.favoured[0].only_in == "sec" and not why.favoured[0].marks_page  # an S-K item: in a filing only
    what = understand("What was 3M's operating margin in FY2022?")
    assert what.favoured and all(f.marks_page and f.only_in is None for f in what.favoured)  # a statement


def test_the_most_recent_period_asked_is_each_filers_newest_filing() -> None:
    def filing(year: int, form: str, month: int = 12) -> FilingIdentity:
        return FilingIdentity(names=(("acme",),), tickers=frozenset(), years=frozenset({year}), form=form,
                              quarter=None, period_ends=frozenset({(year, month)}))  # fmt: skip

    identities = {1: filing(2018, "10-K"), 2: filing(2020, "10-K"), 3: filing(2021, "10-Q", 6)}
    assert named_filings("What was Acme's revenue last year?", asked_period("... last year?"), identities) == {2}
    question = "What was Acme's revenue in the most recent quarter?"
    assert named_filings(question, asked_period(question), identities) == {3}
    question = "What does Acme's latest 10-K say about leases?"
    assert named_filings(question, asked_period(question), identities) == {2}
    question = "What did Acme say about leases?"  # no period: every filing of the filer
    assert named_filings(question, asked_period(question), identities) == {1, 2, 3}


def test_a_year_no_filing_reports_on_is_read_in_the_next_reports_comparative_columns() -> None:
    def ten_k(year: int) -> FilingIdentity:
        return FilingIdentity(
            names=(("acme",),), tickers=frozenset(), years=frozenset({year}), form="10-K", quarter=None
        )

    filings = {1: ten_k(2022), 2: ten_k(2023), 3: ten_k(2020)}
    for question, expected in {
        "What was Acme's revenue in FY2022?": {1},  # its own report
        "What was Acme's revenue in FY2021?": {1},  # none of its own: the next year's shows it (S-X 3-02)
        "What was Acme's revenue in FY2018?": {3},  # the report two years on: three years of income statements
        "What was Acme's revenue in FY2015?": {1, 2, 3},  # shown by none: the search decides among them all
    }.items():
        assert named_filings(question, asked_period(question), filings) == expected, question
