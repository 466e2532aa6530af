"""A filing's identity from its cover page and file name (docqa.profiles.sec.covers): pure text, no store."""

from __future__ import annotations

from docqa.profiles.sec.covers import read_identity

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


def test_an_amended_10k_is_a_10k() -> None:
    identity = read_identity("report.pdf", TEN_K.replace("FORM 10-K", "FORM 10-K/A"))
    assert identity is not None and identity.form == "10-K" and 2023 in identity.years


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
