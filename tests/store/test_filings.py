"""A filing's identity from its cover page and file name, and the period a question names
(docqa.store.keyword.filings): pure text, no store."""

from __future__ import annotations

import pytest

from docqa.store.keyword.filings import AskedPeriod, asked_period, named_in, read_identity

TEN_K = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-K
(Mark One)
☒ ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended January 28, 2023
Commission file number 1-9595
BEST BUY CO., INC.
(Exact name of registrant as specified in its charter)
Minnesota 41-0907483
"""
ONE_WORD_A_LINE = """UNITED
STATES
SECURITIES
AND
EXCHANGE
COMMISSION
FORM
10-K
For
the
fiscal
year
ended
December
31,
2016
Commission
File
Number
001-37622
SQUARE,
INC.
(Exact
name
of
registrant
"""
RELEASE = """Amcor reports fiscal 2023 results and provides outlook for fiscal 2024
June 2023 quarter: GAAP diluted EPS of 12.3 cps
Net sales of $14,694 million. The Company's Form 10-Q filed with the Securities and Exchange Commission ...
"""
CONTRACT = """EXHIBIT 10.1
AGENCY AGREEMENT
This Agency Agreement is made on March 31, 2000 between Biopure Corporation and Northway Agents Ltd.
"""


def test_a_10k_cover_gives_company_form_and_fiscal_year() -> None:
    identity = read_identity("annual report.pdf", TEN_K)
    assert identity is not None
    assert ("best", "buy") in identity.names  # "Co., Inc." dropped: the company is named "Best Buy"
    assert identity.form == "10-K"
    assert identity.years == {2023}  # the year its fiscal year ended, as the company names it


def test_a_registrant_name_broken_one_word_a_line_is_still_read() -> None:
    identity = read_identity("report.pdf", ONE_WORD_A_LINE)
    assert identity is not None and identity.names == (("square",),) and identity.years == {2016}
    # "report.pdf" names no company (a file name without a year or a form is not read for one)


def test_file_name_adds_company_year_quarter_and_form() -> None:
    identity = read_identity("BESTBUY_2024Q2_10Q.pdf", TEN_K.replace("10-K", "10-Q"))
    assert identity is not None
    assert ("bestbuy",) in identity.names and identity.quarter == 2
    assert identity.years == {2023, 2024}  # fiscal 2024's second quarter ended in 2023: both are kept


def test_a_results_release_takes_its_first_year_only_and_ignores_a_10q_it_cites() -> None:
    identity = read_identity("amcor-results.pdf", RELEASE)
    assert identity is not None
    assert identity.form == "earnings" and identity.years == {2023} and ("amcor",) in identity.names


def test_a_contract_is_not_a_filing() -> None:
    assert read_identity("BIOPURECORP_03_31_2000-EX-10.1-AGENCY AGREEMENT.txt", CONTRACT) is None


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("What is the FY2019 - FY2020 total revenue growth rate for Block?", AskedPeriod(2020, None, None)),
        ("Was there any drop in cash between FY 2023 and Q2 of FY2024?", AskedPeriod(2024, 2, None)),
        ("As of FY2023Q1, why did Pepsico raise guidance?", AskedPeriod(2023, 1, None)),
        ("What was the FY18 capex?", AskedPeriod(2018, None, None)),
        ("公司2018财年的营业收入是多少？", AskedPeriod(2018, None, None)),
        (
            "What was the key agenda of the AMCOR's 8k filing dated 1st July 2022?",
            AskedPeriod(2022, None, "8-K", (2022, 7)),
        ),
        ("Which debt securities are registered as of Q2 of 2023?", AskedPeriod(2023, 2, None)),
        ("What was the revenue in 2021 Q1?", AskedPeriod(2021, 1, None)),
        ("How did Q2'23 margins move?", AskedPeriod(2023, 2, None)),
        ("2Q23 net sales and Q3FY22 sales", AskedPeriod(2023, 2, None)),
        ("Cash at the end of H1 2023?", AskedPeriod(2023, 2, None)),
        ("Sales in the first half of fiscal 2024", AskedPeriod(2024, 2, None)),
        ("Revenue for the nine months ended September 30, 2022", AskedPeriod(2022, 3, None, (2022, 9))),
        ("In its quarterly report for the quarter ended June 30, 2023", AskedPeriod(2023, None, "10-Q", (2023, 6))),
        ("What did the earnings release for FY23 say?", AskedPeriod(2023, None, "earnings")),
        ("What is the FY2019 earnings per share?", AskedPeriod(2019, None, None)),  # EPS is not a release
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


COVER_WITH_SYMBOLS = """UNITED STATES SECURITIES AND EXCHANGE COMMISSION
FORM 10-Q
For the quarterly period ended June 30, 2023
JOHNSON & JOHNSON
(Exact name of registrant as specified in its charter)
Securities registered pursuant to Section 12(b) of the Act:
Title of each class Trading Symbol(s) Name of each exchange on which registered
Common Stock, Par Value $1.00 JNJ New York Stock Exchange
0.650% Notes Due May 2024 JNJ24C New York
Stock Exchange
Securities registered pursuant to Section 12(g) of the Act: None
"""


def test_a_cover_lists_the_companys_trading_symbols_not_its_notes() -> None:
    identity = read_identity("jnj-10q.pdf", COVER_WITH_SYMBOLS)
    assert identity is not None and identity.tickers == {"JNJ"} and identity.form == "10-Q"
    assert identity.period_ends == {(2023, 6)}


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What was JNJ's revenue in Q2 2023?", True),
        ("What was jnj's revenue?", True),  # a symbol with no vowel is no English word: any case
        ("Did J&J raise its guidance?", True),  # the initials of a name joined by "&"
        ("Johnson & Johnson cash at June 30, 2023", True),
        ("What was Pfizer's revenue?", False),
    ],
)
def test_a_question_names_a_company_by_symbol_initials_or_name(question: str, named: bool) -> None:
    identity = read_identity("jnj-10q.pdf", COVER_WITH_SYMBOLS)
    assert identity is not None and named_in(question, identity) is named


def test_a_lowercase_word_is_not_a_symbol() -> None:
    lowes = read_identity("lowes.pdf", COVER_WITH_SYMBOLS.replace("JNJ", "LOW").replace("JOHNSON & JOHNSON", "LOWES"))
    assert lowes is not None and lowes.tickers == {"LOW"}
    assert named_in("What was LOW's gross margin?", lowes)
    assert not named_in("Which segment had a low gross margin?", lowes)
    jpm = read_identity("JPM_2022_10K.pdf", TEN_K.replace("BEST BUY CO., INC.", "JPMORGAN CHASE & CO."))
    assert jpm is not None and named_in("What is JP Morgan's CET1 ratio?", jpm)  # the first word, split
