"""The financial statement a question needs (docqa.profiles.sec.statements), and its pages ranked first
on a real SQLite store."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from docqa.profiles.csrc.sections import COMPANY_PROFILE, asked_profile_sections
from docqa.profiles.sec.statements import (
    BALANCE_SHEET,
    CASH_FLOW_STATEMENT,
    INCOME_STATEMENT,
    asked_statements,
)
from docqa.store.db import SqliteStore
from docqa.store.models import SavedDocument
from tests.support.profiles import PROFILES
from tests.support.store_rows import bm25, save


@pytest.mark.parametrize(
    ("question", "sections"),
    [
        ("实际控制人是谁？", [COMPANY_PROFILE]),  # Chinese: matched inside the sentence, no word boundaries
        ("公司和安徽黄山胶囊股份有限公司谁的注册资本高？", [COMPANY_PROFILE]),
        ("2008年度无形资产投资多少？", []),
        ("What is the FY2018 capital expenditure amount (in USD millions) for 3M?", []),
    ],
)
def test_the_company_profile_sections_a_chinese_question_asks_a_fact_of(question: str, sections: list) -> None:
    assert list(asked_profile_sections(question)) == sections


@pytest.mark.parametrize(
    ("question", "statements"),
    [
        ("What is the FY2018 capital expenditure amount (in USD millions) for 3M?", [CASH_FLOW_STATEMENT]),
        ("what is the FY2020 working capital ratio, from the statement of financial position?", [BALANCE_SHEET]),
        ("Does Adobe have an improving operating margin profile as of FY2022?", [INCOME_STATEMENT]),
        ("What is FY2018 days payable outstanding (DPO) for Walmart?", [BALANCE_SHEET, INCOME_STATEMENT]),
        ("Which law governs the agreement?", []),
        ("Is the licensee allowed to sublicense?", []),  # "license" holds no statement's line
        ("2008年度无形资产投资多少？", []),
        # the statements' standard captions (S-X 5-02, 5-03, ASC 230), not only the ratios read from them
        ("How much goodwill did Corning carry as of FY2021?", [BALANCE_SHEET]),
        ("What were accrued liabilities at the end of the year?", [BALANCE_SHEET]),
        ("How much did Adobe spend on research and development in FY2017?", [INCOME_STATEMENT]),
        ("What was the provision for income taxes in 2019?", [INCOME_STATEMENT]),
        ("How much debt did Block repay in 2020?", [CASH_FLOW_STATEMENT]),
        ("What was net cash used in investing activities?", [CASH_FLOW_STATEMENT]),
        ("How much stock-based compensation was added back?", [CASH_FLOW_STATEMENT]),
        ("What was the net change in Best Buy's cash during FY2023?", [CASH_FLOW_STATEMENT]),  # the name between
        ("Did Adobe issue senior notes in 2017?", [CASH_FLOW_STATEMENT]),
        # other industries' captions: a bank's (S-X Article 9), an insurer's (Article 7), a utility's
        ("What were JPMorgan's total deposits at the end of 2022?", [BALANCE_SHEET]),
        ("What was the allowance for loan losses at year end?", [BALANCE_SHEET]),
        ("What was American Express's net interest income in FY2022?", [INCOME_STATEMENT]),
        ("How much did the bank set aside as its provision for credit losses in 2021?", [INCOME_STATEMENT]),
        ("How much did CVS earn in premiums in 2022?", [INCOME_STATEMENT]),
        ("How large is American Water's utility plant?", [BALANCE_SHEET]),
        ("Is there a security deposit, and what premium is paid?", []),  # a contract's singulars name no line
    ],
)
def test_asked_statements(question: str, statements: list[tuple[str, ...]]) -> None:
    assert list(asked_statements(question)) == statements


MD_AND_A = (
    "Liquidity and Capital Resources\n\nCapital expenditures were higher in 2018. The company expects capital "
    "expenditures of about 1.5 billion in 2019, and capital expenditure plans stay flexible. "
) * 3
STATEMENT = (
    "Consolidated Statements of Cash Flows\nYears ended December 31\n(Millions) 2018 2017\n"
    "Net income 5,363 4,869\nDepreciation and amortization 1,488 1,544\n"
    "Purchases of property, plant and equipment (PP&E) (1,577) (1,373)\n"
)
FILLER = "The company designs, makes and sells products in many countries through its four segments. " * 20


def test_the_statement_a_question_needs_ranks_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id
    saved = save(store, coll, "acme.pdf", [FILLER, MD_AND_A + FILLER, STATEMENT + FILLER], None)
    for n in range(20):  # other documents, so that the question's words are rare ones
        save(store, coll, f"other{n}.txt", [f"Minutes of meeting {n} of the garden club. " * 30], None, sha=f"o{n}")
    question = "What is the FY2018 capital expenditure amount (in USD millions)?"
    top = bm25(store, coll, question, 3, document_id=saved.document_id)
    assert top[0][0] == saved.chunk_ids[2]
    unweighed = PROFILES.with_weights("sec", statement=0.0)  # without the statement's bonus: the prose
    assert bm25(store, coll, question, 3, saved.document_id, unweighed)[0][0] == saved.chunk_ids[1]


OVERVIEW = "第二节 概览\n一、发行人简介\n公司实际控制人为邹承慧，注册资本为一亿元。\n"
SECTIONS = "第三节 本次发行概况\n第四节 风险因素\n第五节 业务与技术\n"  # a passage carries the 3 headings before it
MENTIONS = (
    "第七节 同业竞争与关联交易\n公司实际控制人邹承慧出具承诺，实际控制人承诺不从事同业竞争，实际控制人保证履行。\n"
)
ZH_FILLER = "公司生产太阳能电池边框和安装支架产品，销售给国内外客户。" * 30


def _prospectus(tmp_path: Path, section: str, mentions: str) -> tuple[SqliteStore, int, SavedDocument]:
    """A prospectus whose second chunk holds `section`, its fourth `mentions` (three other headings between
    them), among 20 other documents so that the question's words are rare ones."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id
    chunks = [ZH_FILLER, section + ZH_FILLER, SECTIONS + ZH_FILLER, mentions + ZH_FILLER]
    saved = save(store, coll, "招股说明书.pdf", chunks, None)
    for n in range(20):
        save(store, coll, f"other{n}.txt", [f"第{n}次会议纪要，园艺俱乐部讨论花卉种植。" * 30], None, sha=f"o{n}")
    return store, coll, saved


def test_a_profile_question_finds_the_overview_before_the_pages_that_repeat_the_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, coll, saved = _prospectus(tmp_path, OVERVIEW, MENTIONS * 3)
    question = "实际控制人是谁？"
    assert bm25(store, coll, question, 3, document_id=saved.document_id)[0][0] == saved.chunk_ids[1]
    unweighed = PROFILES.with_weights("csrc", profile_section=0.0)  # without the profile's bonus: the repeats
    assert bm25(store, coll, question, 3, saved.document_id, unweighed)[0][0] == saved.chunk_ids[3]


SUBSIDIARIES = (
    "负责供应商的管理。（四）发行人控股子公司基本情况截至本招股意向书签署之日，发行人拥有南通爱康和无锡爱康。\n"
)
SUBSIDIARY_MENTIONS = (
    "第七节 同业竞争与关联交易\n控股子公司向关联方采购，控股子公司的关联交易，控股子公司承诺减少关联交易。\n"
)


def test_a_csrc_section_of_several_characters_steers_a_chinese_question(tmp_path: Path) -> None:
    """The section's title (控股子公司, five characters) is matched as the bigrams its heading was indexed as,
    and the heading is found where the PDF's text runs it into the sentence before it."""
    store, coll, saved = _prospectus(tmp_path, SUBSIDIARIES, SUBSIDIARY_MENTIONS * 2)
    question = "公司有哪些控股子公司？"
    under_heading, repeats = saved.chunk_ids[1], saved.chunk_ids[3]
    scores = dict(bm25(store, coll, question, 4, document_id=saved.document_id))
    assert max(scores, key=scores.__getitem__) == under_heading
    unweighed = PROFILES.with_weights("csrc", section=0.0)
    without_section = dict(bm25(store, coll, question, 4, saved.document_id, unweighed))
    assert scores[under_heading] > without_section[under_heading] and scores[repeats] == without_section[repeats]
    store.ranking = replace(store.ranking, heading_weight=0.0)  # and without the heading's words: the repeats
    assert bm25(store, coll, question, 3, saved.document_id, unweighed)[0][0] == repeats
