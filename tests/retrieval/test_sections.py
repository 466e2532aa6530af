"""The standard sections a question's topic lives in (docqa.profiles.sec.sections): the titles
of Regulation S-K's items and the notes' standard titles for SEC filings, the CSRC's for Chinese ones."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from docqa.profiles.csrc.sections import CSRC_SECTIONS, asked_csrc_sections
from docqa.profiles.sec.identity import FilingIdentity
from docqa.profiles.sec.sections import asked_sections, asks_about_the_cover
from docqa.profiles.sec.statements import asked_statements
from docqa.profiles.sec.topics import SECTIONS
from docqa.store.db import SqliteStore
from tests.support.profiles import PROFILES, understand
from tests.support.store_rows import bm25, save


@pytest.mark.parametrize(
    ("question", "first_title"),
    [
        ("What legal proceedings is 3M involved in?", "legal proceedings"),
        ("Who are its main competitors?", "competition"),
        ("How many shares did the company buy back?", "market for registrant's common equity"),
        ("How exposed is it to interest rate risk?", "quantitative and qualitative disclosures about market risk"),
        # "risks" inside "market risks" asks for Item 7A, not also for the risk factors
        ("What market risks does 3M face?", "quantitative and qualitative disclosures about market risk"),
        ("What are the main risks to 3M's business?", "risk factors"),
        ("Where is 3M headquartered?", "item 2 properties"),
        (
            "How would a change in interest rates affect 3M?",
            "quantitative and qualitative disclosures about market risk",
        ),
        ("How many people work for 3M?", "human capital"),
        ("Does the company have any material weakness in internal control?", "controls and procedures"),
        ("What are the company's critical accounting estimates?", "critical accounting estimates"),
        ("Who is the company's auditor?", "report of independent registered public accounting firm"),
        ("Is there substantial doubt about its ability to continue as a going concern?", "going concern"),
        ("What was the CEO's compensation in 2022?", "executive compensation"),
        ("How large is the backlog?", "backlog"),
        # Item 1 itself (Regulation S-K Item 101: the business, its industry, principal products and services)
        ("What industry does 3M primarily operate in?", "item 1 business"),
        ("Describe Acme's business and its main products.", "item 1 business"),
        ("What are the company's principal products and services?", "item 1 business"),
        # why a line of the results changed: Item 7's results of operations (S-K Item 303(b)(2))
        ("What drove the change in 3M's operating margin in FY2022?", "results of operations"),
        ("Why did Acme's SG&A expenses rise in 2023?", "results of operations"),
        ("What were the main reasons for the decline in net sales?", "results of operations"),
        ("If gross margin is not useful, state that and explain why.", None),  # FinanceBench's boilerplate
        # a bank's (Regulation S-K Subpart 1400, the capital rules) and a utility's (Item 101's regulation)
        ("What was JPMorgan's CET1 ratio at the end of Q2 2023?", "regulatory capital"),
        ("How did net charge-offs move in 2022?", "credit quality"),
        ("How did the net interest margin move in 2022?", "net interest income"),
        ("How much did total deposits grow?", None),  # a balance sheet line: a statement question
        ("Which rate cases were pending at year end?", "regulation"),
        ("What is the FY2020 working capital ratio?", None),  # no bank's capital ratio
        ("Which law governs the agreement?", None),
    ],
)
def test_an_analysts_words_lead_to_the_items_title(question: str, first_title: str | None) -> None:
    sec = asked_sections(question)
    assert (sec[0][0] if sec else None) == first_title


def test_a_topic_inside_a_longer_topics_words_is_not_asked_for() -> None:
    sec = asked_sections("What market risks and other risks does 3M face?")
    market_risk = "quantitative and qualitative disclosures about market risk"
    assert [titles[0] for titles in sec] == ["risk factors", market_risk]
    assert len(asked_sections("What market risks does 3M face?")) == 1


def test_buying_a_business_is_an_acquisition_but_best_buy_is_a_name_and_buying_back_a_repurchase() -> None:
    def first_titles(question: str) -> list[str]:
        return [titles[0] for titles in asked_sections(question)]

    assert first_titles("Which businesses did 3M buy in FY2018?") == ["acquisitions"]
    assert first_titles("How many shares did 3M buy back?") == ["market for registrant's common equity"]
    best_buy = FilingIdentity(names=(("best", "buy"),), tickers=frozenset({"BBY"}), years=frozenset({2023}),
                              form="10-K", quarter=None)  # fmt: skip

    def sections(question: str) -> list[str]:  # as the SEC profile reads it, knowing the collection's filers
        return [f.titles[0] for f in understand(question, {1: best_buy}).favoured if f.only_in == "sec"]

    assert sections("What properties did Best Buy report?") == ["item 2 properties"]  # a filer's name, no topic
    assert sections("Which companies did Best Buy buy in FY2023?") == ["acquisitions"]
    assert first_titles("What properties did Best Buy report?") == ["item 2 properties", "acquisitions"]  # unknown


def test_the_words_read_in_dev_misses_can_be_switched_off_and_every_topic_names_its_source() -> None:
    question = "What drove the operating margin change at 3M?"
    assert asked_sections(question) == (("results of operations",),)
    assert asked_sections(question, words_from_misses=False) == ()  # set D's words, measured apart
    assert asked_sections("How many people work for 3M?", words_from_misses=False) == ()
    assert all(topic.source for topic in SECTIONS) and all(bool(t.misses) == bool(t.read_in) for t in SECTIONS)
    assert all(source.startswith(("CSRC content and format standard", "No. 2")) for *_, source in CSRC_SECTIONS)
    cash = "What was the net increase in Acme's cash in 2022?"  # set N's: the company's name inside the caption
    assert asked_statements(cash) and not asked_statements(cash, words_from_misses=False)


def test_chinese_questions_lead_to_the_csrc_sections() -> None:
    assert asked_csrc_sections("会计师事务所出具了什么审计意见？")[0][0] == "审计报告"
    assert asked_csrc_sections("公司有哪些重大诉讼？")[0][0] == "诉讼或仲裁事项"
    assert asked_csrc_sections("董事的薪酬是多少？")[0][0] == "董事、监事、高级管理人员"
    assert asked_csrc_sections("江苏爱康太阳能公司有哪些控股子公司？")[0][0] == "控股子公司"
    assert asked_csrc_sections("有哪些国有法人股东？")[0][0] == "发起人"  # 发行人基本情况's shareholders
    assert asked_csrc_sections("公司未来三年的发展规划是什么？")[0][0] == "业务发展目标"
    assert asked_csrc_sections("公司为谁提供了担保？")[0][0] == "重大合同"
    assert asked_csrc_sections("What are the risks?") == ()  # an English question: no CSRC section


COVER = "UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\nAcme Corp\nFor the fiscal year ended 2017\n"
EMPLOYEES = "Employees\nAs of December 31, 2017, the Company had approximately 61,800 employees worldwide.\n"
RISKS = (
    "Risk Factors\nWe depend on key employees. If we lose employees, or employees leave for rivals, our results "
    "in 2017 and later could suffer; hiring employees costs more each year.\n"
)
FILLER = "The company designs, makes and sells products in many countries through its four segments. " * 20
# a passage carries the 3 headings before it: three more between a section and the next one
OTHER_HEADINGS = (
    "Available Information\nWe file reports.\nExecutive Officers\nOur officers are listed.\n"
    "Corporate Governance\nOur board meets every quarter.\n"
)


def test_a_filings_one_word_section_heading_steers_the_question_there(tmp_path: Path) -> None:
    """The word "Employees" alone above its paragraph is the heading of Item 1's employees section (the standard
    section the question's topic lives in), found over a risk factor that repeats the word."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id
    chunks = [COVER + FILLER, EMPLOYEES + FILLER, OTHER_HEADINGS + FILLER, RISKS + FILLER]
    saved = save(store, coll, "ACME_2017_10K.pdf", chunks, None)
    for n in range(20):  # other documents, so that the question's words are rare ones
        save(store, coll, f"other{n}.txt", [f"Minutes of meeting {n} of the garden club. " * 30], None, sha=f"o{n}")
    question = "How many employees did Acme have at the end of FY2017?"
    assert bm25(store, coll, question, 3, document_id=saved.document_id)[0][0] == saved.chunk_ids[1]
    top_score = dict(bm25(store, coll, question, 4, document_id=saved.document_id))[saved.chunk_ids[1]]
    unweighed = PROFILES.with_weights("sec", section=0.0)
    assert dict(bm25(store, coll, question, 4, saved.document_id, unweighed))[saved.chunk_ids[1]] < top_score
    store.ranking = replace(store.ranking, heading_weight=0.0)  # no heading counts at all: the repeats
    assert bm25(store, coll, question, 3, saved.document_id, unweighed)[0][0] == saved.chunk_ids[3]


@pytest.mark.parametrize(
    ("question", "cover"),
    [
        ("Which debt securities are registered to trade on a national securities exchange under 3M's name?", True),
        ("What classes of securities does Adobe have registered under Section 12(b)?", True),
        ("Is Corning a large accelerated filer?", True),
        ("What is the market value of the shares held by non-affiliates?", True),
        ("Which debt securities did 3M issue in 2018?", False),  # the debt note's, not the cover's
        ("What was the aggregate value of acquisitions?", False),
    ],
)
def test_questions_about_what_a_filings_cover_states(question: str, cover: bool) -> None:
    assert asks_about_the_cover(question) is cover


COVER_TABLE = (
    "Securities registered pursuant to Section 12(b) of the Act:\nTitle of each class Trading Symbol Name of each "
    "exchange on which registered\nCommon Stock, Par Value $.01 Per Share ACME New York Stock Exchange\n"
)
NOTES = "Long-term debt\nThe Company's notes are registered securities; the debt trades over the counter.\n" * 3


def test_a_question_about_the_cover_gets_the_filings_cover_first(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id
    chunks = [COVER + COVER_TABLE + FILLER, FILLER + EMPLOYEES, NOTES + FILLER]
    saved = save(store, coll, "ACME_2017_10K.pdf", chunks, None)
    contract = save(store, coll, "supply.txt", [COVER_TABLE + FILLER, NOTES + FILLER], None, sha="contract")
    question = "Which debt securities are registered to trade on a national securities exchange under Acme's name?"
    assert bm25(store, coll, question, 3, document_id=saved.document_id)[0][0] == saved.chunk_ids[0]
    # a document that is no filing has no cover: its head goes where the words send it
    assert bm25(store, coll, question, 3, document_id=contract.document_id)[0][0] == contract.chunk_ids[1]


ITEM_2 = "Item 2. Properties\nWe own our headquarters in St. Paul, Minnesota, and lease our plants in Ohio and Texas.\n"
PP_AND_E = (
    "Property and Equipment\nProperty, plant and equipment is stated at cost. Property additions in 2017 "
    "were 1.4 billion; property sold was 0.2 billion, and the properties' depreciation is straight-line.\n"
)


def test_item_2s_properties_are_told_from_a_notes_property_and_equipment(tmp_path: Path) -> None:
    """The stems of "properties" and "property" are one ("properti"): the item's number tells them apart."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id
    chunks = [COVER + FILLER, ITEM_2 + FILLER, OTHER_HEADINGS + FILLER, PP_AND_E * 3 + FILLER]
    saved = save(store, coll, "ACME_2017_10K.pdf", chunks, None)
    for n in range(20):
        save(store, coll, f"other{n}.txt", [f"Minutes of meeting {n} of the garden club. " * 30], None, sha=f"o{n}")
    question = "What properties did Acme report in FY2017?"
    order = [chunk_id for chunk_id, _ in bm25(store, coll, question, 4, document_id=saved.document_id)]
    assert order.index(saved.chunk_ids[1]) < order.index(saved.chunk_ids[3])


@pytest.mark.parametrize(
    ("question", "past_head"),
    [
        ("What were Acme's total assets at the end of FY2017?", True),  # the balance sheet's line
        ("What legal proceedings is Acme involved in?", True),  # Item 3
        ("Who are Acme's main competitors?", False),  # Item 1, which opens a 10-K after its cover
        ("What industry does Acme operate in?", False),  # Item 1's own opening
        ("Who are Acme's competitors, and what legal proceedings is it in?", False),  # Item 1 among them
        ("Which securities does Acme have registered under Section 12(b)?", False),  # the cover itself
        ("What is the date of the agreement?", False),  # nothing a filing's standard parts hold
        ("发行人的实际控制人是谁？", False),  # a Chinese filing's profile: its overview, in the head
    ],
)
def test_what_a_question_asks_sits_past_a_filings_head(question: str, past_head: bool) -> None:
    assert (understand(question).head == "never") is past_head


BALANCE_SHEET = (
    "Consolidated Balance Sheets\nCash 1,200 Inventories 3,100 Total current assets 9,800 Property 7,400 "
    "Total assets 37,987 Total liabilities 26,365 Total equity 11,622\n"
)
SEGMENT_NOTE = "Segment Information\nAssets by segment: Industrial 9,000; Safety 7,000; total assets 37,987.\n"


def test_a_statement_line_question_keeps_the_filings_cover_out_of_its_first_places(tmp_path: Path) -> None:
    """A short question gets a document's head at the third place (a contract's date and parties sit there);
    in a filing the head is the cover, which holds no statement's line: the statement and the notes that
    name the line keep the first three places, and a document that is no filing still gets its head."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id
    chunks = [COVER + FILLER, BALANCE_SHEET + FILLER, SEGMENT_NOTE + FILLER, SEGMENT_NOTE * 2 + FILLER]
    filing = save(store, coll, "ACME_2017_10K.pdf", chunks, None)
    other = save(store, coll, "acme_corp_notes.txt", ["Acme Corp notes\n" + FILLER, *chunks[1:]], None, sha="notes")
    for n in range(20):
        save(store, coll, f"other{n}.txt", [f"Minutes of meeting {n} of the garden club. " * 30], None, sha=f"o{n}")
    question = "What were Acme Corp's total assets in FY2017?"  # a short question, once its name is read
    top = [chunk_id for chunk_id, _ in bm25(store, coll, question, 3, document_id=filing.document_id)]
    assert top[0] == filing.chunk_ids[1] and filing.chunk_ids[0] not in top
    top = [chunk_id for chunk_id, _ in bm25(store, coll, question, 3, document_id=other.document_id)]
    assert other.chunk_ids[0] in top


@pytest.mark.parametrize(
    ("question", "item"),
    [
        ("Did AMCOR change its auditor in 2022?", "changes in registrant's certifying accountant"),  # 4.01
        (
            "Why did the company restate its financial statements?",
            "non-reliance on previously issued financial statements",
        ),
        ("Who did Apple appoint as its new CFO?", "departure of directors or certain officers"),  # 5.02
        (
            "Was the company delisted from the NYSE?",
            "notice of delisting or failure to satisfy a continued listing rule or standard",
        ),
        ("What did the 8-K say about the cybersecurity incident?", "material cybersecurity incidents"),  # 1.05
        ("Did the company amend its bylaws in 2023?", "amendments to articles of incorporation or bylaws"),  # 5.03
        ("When did it file for Chapter 11?", "bankruptcy or receivership"),  # 1.03
        ("What was the outcome of the shareholder vote?", "submission of matters to a vote of security holders"),
        ("What is the FY2024 outlook for organic sales?", "outlook"),  # a results release's outlook
        ("What was adjusted EBITDA in Q2?", "reconciliation of gaap to non-gaap"),  # Regulation G
    ],
)
def test_a_current_reports_items_and_a_releases_sections_are_topics_by_their_sources(question: str, item: str) -> None:
    assert item in [titles[0] for titles in asked_sections(question)]
    source = next(t for t in SECTIONS if t.titles[0] == item).source
    assert source.startswith(("Form 8-K Item ", "results releases", "Regulation G"))
