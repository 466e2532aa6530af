"""Chinese listed companies' filings, read from their covers as the CSRC's disclosure rules lay them out.

A prospectus (招股说明书 / 招股意向书) names its issuer on its first lines ("江苏爱康太阳能科技股份有限公司 首次公开
发行股票招股意向书"); an annual, half-year or quarterly report (年度报告, 半年度报告, 第一/第三季度报告) opens
with its stock code and short name ("证券代码：002610 证券简称：爱康科技") and names its year ("2022 年年度报告").
Read here into the same FilingIdentity an SEC cover gives (docqa.profiles.sec.covers): the company by its
full name, its name without the company-form suffix and its short name (each one CJK string), the stock
code as its trading symbol, the report's year and quarter, and the form ("prospectus", "annual report",
"half-year report", "quarterly report").

Pure functions of text.
"""

from __future__ import annotations

import re

from docqa.profiles.sec.identity import FilingIdentity

_CJK = "\u4e00-\u9fff"
# the issuer: a name that ends in a company form
_COMPANY = re.compile(rf"([{_CJK}（）()]{{2,40}}?)(股份有限公司|有限责任公司|有限公司)")
_CODE = re.compile(r"(?:股票|证券|A\s*股)\s*代码\s*[：:]\s*(\d{6})")
_SHORT_NAME = re.compile(
    rf"(?:股票|证券|A\s*股)\s*简称\s*[：:]\s*(\*?(?:ST)?[{_CJK}A-Z]{{2,8}}?)(?=\s|[，,；;]|股票|证券|$)", re.MULTILINE
)
_PROSPECTUS = re.compile(r"招股(?:说明书|意向书)")
_REPORT = re.compile(r"((?:19|20)\d\d)\s*年\s*(年度报告|半年度报告|第一季度报告|第三季度报告)")
_REPORT_FORMS = {
    "年度报告": ("annual report", None),
    "半年度报告": ("half-year report", 2),
    "第一季度报告": ("quarterly report", 1),
    "第三季度报告": ("quarterly report", 3),
}
COVER_CHARS = 600  # where a cover says what the document is


def read_csrc_identity(head: str) -> FilingIdentity | None:
    """A Chinese listed company's prospectus or periodic report, from the start of its text; None for
    anything else (a judgment, a contract, an English filing)."""
    cover = head[:COVER_CHARS]  # the fields as written: "股票简称：国电电力 股票代码：600795"
    issuer = _issuer(cover)
    if issuer is None:
        return None
    compact = _joined(cover)  # "首次公开发行股 票"
    report = _REPORT.search(compact)
    if report is not None:
        form, quarter = _REPORT_FORMS[report.group(2)]
        years = frozenset({int(report.group(1))})
    elif _PROSPECTUS.search(compact):
        form, quarter, years = "prospectus", None, frozenset()
    else:
        return None
    core, full = issuer
    short = _SHORT_NAME.search(cover)
    names = {(full,), (core,)} | ({(short.group(1),)} if short else set())
    code = _CODE.search(cover)
    return FilingIdentity(
        names=tuple(sorted(names)),
        tickers=frozenset({code.group(1)} if code else set()),
        years=years,
        form=form,
        quarter=quarter,
        company=full,
        profile="csrc",
    )


def _joined(text: str) -> str:
    """The text without the spaces PDF text leaves between Chinese characters."""
    return re.sub(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])", "", text)


def _issuer(cover: str) -> tuple[str, str] | None:
    """(name without its company form, full name) of the first line that names a company; a short line of
    Chinese alone above it is the start of the same name ("中钢集团" over "安徽天源科技股份有限公司"), a line
    of fields ("证券简称：国电电力") is not."""
    lines = [_joined(line.strip()) for line in cover.splitlines()]
    for i, line in enumerate(lines):
        found = _COMPANY.search(line)
        if found is None:
            continue
        core = found.group(1)
        if found.start() == 0 and i and re.fullmatch(rf"[{_CJK}]{{2,8}}", lines[i - 1]):
            core = lines[i - 1] + core
        return core, core + found.group(2)
    return None
