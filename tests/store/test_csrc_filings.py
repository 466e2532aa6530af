"""Chinese listed companies' prospectuses and periodic reports read from their covers
(docqa.profiles.csrc.covers), and questions that name them by name, short name or stock code: pure text.
The covers are laid out as the CSRC's rules have them (and as the prospectuses in ../shared/data are)."""

from __future__ import annotations

from docqa.profiles.csrc.covers import read_csrc_identity
from docqa.profiles.sec.filers import named_filings, named_in
from docqa.profiles.sec.identity import FilingIdentity
from docqa.profiles.sec.periods import asked_period
from docqa.store.catalog import matches
from tests.support.profiles import PROFILES, read_catalog

PROSPECTUS = """江苏爱康太阳能科技股份有限公司
（江阴市华士工业集中区红苗园区勤丰路1015号）
首次公开发行股票招股意向书
保荐人（主承销商）
（广东省深圳市福田区金田路大中华国际交易广场 8 层）"""

ANNUAL = """证券代码：600795                    证券简称：国电电力
国电电力发展股份有限公司
2022 年年度报告
重要提示
一、本公司董事会、监事会及董事、监事、高级管理人员保证年度报告内容的真实性"""

HALF_YEAR = ANNUAL.replace("2022 年年度报告", "2023 年半年度报告")

JUDGMENT = """原告某某科技有限公司与被告某某贸易有限公司买卖合同纠纷一案，本院于2019年3月1日立案后，依法适用
普通程序，公开开庭进行了审理。"""


def read_identity(file_name: str, head: str) -> FilingIdentity | None:
    """What the profiles read a Chinese filing as: the Chinese filings profile's identity, first."""
    identity = read_csrc_identity(head)
    assert identity == PROFILES.identity(file_name, head, lambda phrases: [])
    assert identity is None or identity.profile == "csrc"
    return identity


def test_a_prospectus_and_periodic_reports_are_read_from_their_covers() -> None:
    prospectus = read_identity("江苏爱康.pdf", PROSPECTUS)
    assert prospectus is not None and prospectus.form == "prospectus" and not prospectus.years
    assert prospectus.company == "江苏爱康太阳能科技股份有限公司"
    annual, half = read_identity("a.pdf", ANNUAL), read_identity("h.pdf", HALF_YEAR)
    assert annual is not None and half is not None
    assert (annual.form, annual.years, annual.quarter, annual.tickers) == ("annual report", {2022}, None, {"600795"})
    assert (half.form, half.years, half.quarter) == ("half-year report", {2023}, 2)
    assert ("国电电力",) in annual.names  # its short name
    assert read_identity("judgment.txt", JUDGMENT) is None  # names companies, but is no filing
    assert read_catalog("a.pdf", ANNUAL) == {
        "kind": "filing",
        "form": "annual report",
        "company": "国电电力发展股份有限公司",
        "tickers": ["600795"],
        "fiscal_year": 2022,
    }


def test_a_question_names_a_chinese_filer_by_name_short_name_or_code() -> None:
    annual = read_identity("a.pdf", ANNUAL)
    assert annual is not None
    assert named_in("国电电力2022年的营业收入是多少？", annual)
    assert named_in("证券代码600795的公司注册资本是多少？", annual)
    assert named_in("国电电力发展股份有限公司的实际控制人是谁？", annual)
    assert not named_in("国电集团的实际控制人是谁？", annual)
    assert not named_in("6007951号文件", annual)  # a longer number is not the code


def test_a_chinese_question_picks_the_report_it_names() -> None:
    filings = {1: read_identity("a.pdf", ANNUAL), 2: read_identity("h.pdf", HALF_YEAR)}
    identities = {doc: identity for doc, identity in filings.items() if identity is not None}
    for question, chosen in {
        "国电电力2022年年报中的营业收入是多少？": {1},
        "国电电力2023年半年度报告中的净利润是多少？": {2},
        "国电电力的2023年中报说了什么？": {2},
    }.items():
        assert named_filings(question, asked_period(question), identities) == chosen, question


def test_a_filter_names_a_chinese_company_by_its_start_or_its_code() -> None:
    entry = read_catalog("a.pdf", ANNUAL)
    assert matches(entry, [("company", "国电电力")]) and matches(entry, [("company", "600795")])
    assert matches(entry, [("company", "国电电力"), ("year", "2022")])
    assert not matches(entry, [("company", "电力")]) and not matches(entry, [("year", "2023")])
