"""The standard sections a question's topic lives in (docqa.retrieval.understanding.sections): the titles
of Regulation S-K's items and the notes' standard titles for SEC filings, the CSRC's for Chinese ones."""

from __future__ import annotations

import pytest

from docqa.retrieval.understanding.sections import asked_sections


@pytest.mark.parametrize(
    ("question", "first_title"),
    [
        ("What legal proceedings is 3M involved in?", "legal proceedings"),
        ("Who are its main competitors?", "competition"),
        ("How many shares did the company buy back?", "market for registrant's common equity"),
        ("How exposed is it to interest rate risk?", "quantitative and qualitative disclosures about market risk"),
        ("Does the company have any material weakness in internal control?", "controls and procedures"),
        ("What are the company's critical accounting estimates?", "critical accounting estimates"),
        ("Who is the company's auditor?", "report of independent registered public accounting firm"),
        ("Is there substantial doubt about its ability to continue as a going concern?", "going concern"),
        ("What was the CEO's compensation in 2022?", "executive compensation"),
        ("How large is the backlog?", "backlog"),
        ("Which law governs the agreement?", None),
    ],
)
def test_an_analysts_words_lead_to_the_items_title(question: str, first_title: str | None) -> None:
    sec, _ = asked_sections(question)
    assert (sec[0][0] if sec else None) == first_title


def test_chinese_questions_lead_to_the_csrc_sections() -> None:
    assert asked_sections("会计师事务所出具了什么审计意见？")[1][0][0] == "审计报告"
    assert asked_sections("公司有哪些重大诉讼？")[1][0][0] == "诉讼或仲裁事项"
    assert asked_sections("董事的薪酬是多少？")[1][0][0] == "董事、监事、高级管理人员"
    assert asked_sections("江苏爱康太阳能公司有哪些控股子公司？")[1][0][0] == "控股子公司"
    assert asked_sections("有哪些国有法人股东？")[1][0][0] == "发起人"  # 发行人基本情况's shareholders
    assert asked_sections("公司未来三年的发展规划是什么？")[1][0][0] == "业务发展目标"
    assert asked_sections("公司为谁提供了担保？")[1][0][0] == "重大合同"
    assert asked_sections("What are the risks?")[1] == ()  # an English question: no CSRC section
