"""Which standard section of a Chinese listed company's filing holds what a question asks about.

Chinese prospectuses and annual reports follow the CSRC's standard layouts (the content and format standards
for a prospectus and for an annual report: 风险因素, 业务与技术, 募集资金运用, ...). A question names the topic in
its own words; the maps below go from a topic's common words to the titles of the section(s) that hold it.

A company's profile (who controls it, its registered capital, its legal representative, where its shares list)
is a fact every such filing states in its overview and basic-information sections (第二节 概览, 发行人基本情况,
公司简介) and then repeats, in passing, on hundreds of pages that BM25 ranks first: a question asking for one of
those facts gets those sections' titles, weighted as a statement is (its page is where the answer sits).

Pure functions of the question's text.
"""

from __future__ import annotations

import re

from docqa.core.query import Titles
from docqa.profiles.matching import specific_sections

# The CSRC's standard sections of a prospectus and an annual report (the content and format standards for
# public offerings' disclosure: No. 1, the prospectus, and No. 2, the annual report), each with the chapter it is
# (P: the prospectus standard's; A: the annual report standard's). Chinese has no word boundaries, so the words
# match anywhere in the question.
_P, _A = "CSRC content and format standard No. 1 (prospectus)", "No. 2 (annual report)"
CSRC_SECTIONS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("风险因素", "重大风险提示"), r"风险", f"{_P}: 风险因素, and its 重大事项提示"),
    (("业务与技术", "主营业务", "主要产品"), r"主营业务|主要产品|业务模式|竞争|客户|供应商", f"{_P}: 业务与技术"),
    (("募集资金运用", "募集资金投资项目"), r"募集资金|募投", f"{_P}: 募集资金运用"),
    (("股利分配政策", "利润分配"), r"股利|分红|利润分配", f"{_P}: 股利分配政策; {_A}: 利润分配"),
    (("诉讼或仲裁事项", "重大诉讼", "诉讼"), r"诉讼|仲裁", f"{_P}: 其他重要事项; {_A}: 重要事项"),
    (("关联交易", "关联方"), r"关联交易|关联方", f"{_P}: 同业竞争与关联交易"),
    (("同业竞争",), r"同业竞争", f"{_P}: 同业竞争与关联交易"),
    (("审计报告", "审计意见"), r"审计|会计师事务所", f"{_A}: 财务报告 (审计报告)"),
    (
        ("董事、监事、高级管理人员", "核心技术人员", "薪酬"),
        r"薪酬|报酬|董事|监事|高级管理人员|高管|核心技术人员",
        f"{_P}: 董事、监事、高级管理人员与核心技术人员",
    ),
    (
        ("控股子公司", "参股子公司", "参股公司", "子公司"),
        r"子公司|参股公司|分公司",
        f"{_P}: 发行人基本情况; {_A}: 主要控股参股公司分析",
    ),
    (
        ("发起人", "股本情况", "股本结构", "主要股东", "控股股东", "实际控制人", "股权结构", "股东情况"),
        r"股东|股本|股权结构|实际控制人|发起人|持股",
        f"{_P}: 发行人基本情况; {_A}: 股份变动及股东情况",
    ),
    (("员工", "社会保障"), r"员工|职工|社保|社会保险|公积金", f"{_P}: 发行人基本情况 (员工及其社会保障)"),
    (("本次发行概况", "发行概况"), r"发行价格|发行数量|发行费用|发行方式|保荐|承销", f"{_P}: 本次发行概况"),
    (("公司治理", "内部控制"), r"公司治理|内部控制|内控|股东大会|三会", f"{_P}: 公司治理; {_A}: 公司治理"),
    (
        ("业务发展目标", "发展规划", "发展战略"),
        r"发展目标|发展规划|发展战略|未来规划|经营计划",
        f"{_P}: 业务发展目标",
    ),
    (("重大合同", "对外担保"), r"重大合同|担保", f"{_P}: 其他重要事项"),
    (("资本性支出",), r"资本性支出|资本支出", f"{_P}: 管理层讨论与分析"),
)
# Chinese filings' profile sections (CSRC layouts: prospectus 第二节 概览 and 发行人基本情况; annual report
# 公司简介和主要财务指标), and what a question names to ask for a fact they state. Chinese has no word
# boundaries, so these match anywhere in the question.
COMPANY_PROFILE = ("概览", "发行人基本情况", "公司简介")
_PROFILE_ASKS = {
    COMPANY_PROFILE: (
        r"实际控制人|控股股东|注册资本|法定代表人|注册地址|住所|成立日期|设立日期|股票代码|证券代码|股票简称"
        r"|上市地点|拟上市|证券交易所|发行前总股本|董事长"
    ),
}
_SECTION_PATTERNS = tuple((titles, re.compile(asks)) for titles, asks, _ in CSRC_SECTIONS)
_PROFILE_PATTERNS = {titles: re.compile(asks) for titles, asks in _PROFILE_ASKS.items()}


def asked_csrc_sections(question: str) -> tuple[Titles, ...]:
    """The CSRC standard sections a question's topic lives in (they apply to any document: Chinese text
    alone holds these titles)."""
    return specific_sections(question, _SECTION_PATTERNS)


def asked_profile_sections(question: str) -> tuple[Titles, ...]:
    """The company-profile sections a question asks a fact of."""
    return tuple(titles for titles, pattern in _PROFILE_PATTERNS.items() if pattern.search(question))
