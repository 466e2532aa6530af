"""The scope a question asks for, from its wording: phrasings of each kind as people put them to a folder of
contracts or filings (the collection questions of legal and finance users, comparisons, summaries), and
lookups that share their words but ask for one passage."""

from __future__ import annotations

import pytest

from docqa.answering.scope_choice import NamedDocument, choose_scope, may_read_many, named_documents, topic_of

FOLDER = [
    NamedDocument(1, ("DYNAMEX INC_10_01_2002-EX-10.1-DISTRIBUTOR AGREEMENT.pdf",)),
    NamedDocument(2, ("ACCURAYINC_09_01_2010-EX-10.31-DISTRIBUTOR AGREEMENT.pdf",)),
    NamedDocument(3, ("msa_harbor.pdf", "MASTER SERVICES AGREEMENT", "Harbor Analytics Ltd.")),
    NamedDocument(4, ("3M_2022_10K.pdf", "3M")),
    NamedDocument(5, ("江苏爱康太阳能科技股份有限公司.pdf",)),
    NamedDocument(6, ("supply_contract_zh.txt", "设备采购合同")),
]


@pytest.mark.parametrize(
    "question",
    [
        "Which of these contracts have a non-compete clause?",
        "Which contracts can be terminated for convenience?",
        "which agreements are governed by New York law",
        "List every agreement governed by New York law",
        "List all the vendor agreements with a liability cap",
        "How many of our contracts can be assigned without consent?",
        "How many agreements renew automatically?",
        "Do any of the agreements have a most favored nation clause?",
        "Does any contract allow the licensor to audit the books?",
        "What does each contract say about insurance?",
        "Across all the leases, what is the notice period?",
        "Show me all contracts that expire in 2025",
        "Which documents mention a change of control?",
        "Which of the filings report a goodwill impairment?",
        "哪些合同约定了竞业禁止？",
        "有多少份合同适用纽约州法律？",
        "所有合同中的违约金条款是怎么约定的？",
        "每份协议的有效期是多久？",
    ],
)
def test_questions_about_the_documents_of_a_collection(question: str) -> None:
    assert choose_scope(question, FOLDER).scope == "collection"


@pytest.mark.parametrize(
    ("question", "documents"),
    [
        ("Compare the termination clauses of the Dynamex and the Accuray agreements", (1, 2)),
        ("What's the difference between the Dynamex and Accuray warranty periods?", (1, 2)),
        ("Dynamex vs Accuray: which has the longer initial term?", (1, 2)),
        ("How do the Dynamex and Accuray agreements differ on exclusivity?", (1, 2)),
        ("Contrast the Harbor MSA with the Dynamex distributor agreement on liability", (1, 3)),
        ("比较爱康招股书和设备采购合同的付款条款", (5, 6)),
        ("Summarize the Dynamex and the Accuray agreements side by side", (1, 2)),
    ],
)
def test_comparisons_of_named_documents(question: str, documents: tuple[int, ...]) -> None:
    decision = choose_scope(question, FOLDER)
    assert (decision.scope, decision.documents) == ("compare", documents)


@pytest.mark.parametrize(
    ("question", "documents"),
    [
        ("Summarize the Dynamex agreement", (1,)),
        ("Give me an outline of the Harbor MSA", (3,)),
        ("What are the key terms of the Accuray contract?", (2,)),
        ("What is the Dynamex agreement about?", (1,)),
        ("Give me an overview of 3M's 10-K", (4,)),
        ("List all the obligations of the distributor in the Dynamex contract", (1,)),
        ("总结一下爱康太阳能的招股说明书", (5,)),
        ("Summarize this 10-K", ()),  # named by nothing: the best match is read
        ("tl;dr of the Dynamex deal", (1,)),
    ],
)
def test_questions_about_one_whole_document(question: str, documents: tuple[int, ...]) -> None:
    decision = choose_scope(question, FOLDER)
    assert (decision.scope, decision.documents) == ("document", documents)


@pytest.mark.parametrize(
    "question",
    [
        "What law governs the agreement?",
        "Which law governs the Dynamex agreement?",
        "What is the notice period for termination for convenience?",
        "How many days does the agreement give to cure a breach?",
        "How many days of written notice are needed to terminate?",
        "Is any payment due under the agreement on signing?",
        "Which party pays for shipping?",
        "What was 3M's revenue in 2022?",
        "Who is the chief executive of Northwind?",
        "设备的质保期是多久？",
        "Compare revenue with the prior year",  # one filing's own figures: a passage, no two documents named
        "Which contract has the vault code K000?",  # one document that holds a thing: a passage
        "Which current report did Acme Mining file in 2023?",
        "Which rate cases were pending at year end?",
        "What are the main risks to 3M's business?",  # Item 1A's passages, not the whole filing
        "公司有哪些重大诉讼？",  # which lawsuits: the passages that list them
        "江苏爱康太阳能公司有哪些控股子公司？",
    ],
)
def test_lookups_stay_lookups(question: str) -> None:
    assert choose_scope(question, FOLDER).scope == "lookup"


def test_a_caller_pinned_document_is_the_one_summarized_and_pins_make_a_comparison() -> None:
    assert choose_scope("Summarize it", FOLDER, pinned=(4,)).documents == (4,)
    assert choose_scope("Compare the indemnities", FOLDER, pinned=(2, 3)).scope == "compare"


def test_a_one_document_collection_summary_needs_no_name() -> None:
    decision = choose_scope("Give me a summary", [NamedDocument(9, ("report.pdf",))])
    assert (decision.scope, decision.documents) == ("document", (9,))


def test_a_word_many_document_names_share_names_none_of_them() -> None:
    folder = [NamedDocument(i, (f"ACME{i}_DISTRIBUTOR AGREEMENT.pdf",)) for i in range(1, 6)]
    assert named_documents("Which distributor agreement has exclusivity?", folder) == ()
    assert named_documents("the acme3 distributor agreement", folder) == (3,)


def test_the_topic_drops_the_collection_wording() -> None:
    assert topic_of("Which of these contracts contain a non-compete clause?") == "contain a non-compete clause?"
    assert topic_of("How many of our agreements renew automatically?") == "renew automatically?"
    assert topic_of("What is the governing law?") == "What is the governing law?"


def test_may_read_many_is_the_wording_alone() -> None:
    assert may_read_many("Which of these contracts have a cap?") and may_read_many("Summarize the 10-K")
    assert not may_read_many("What is the cap on liability?")


def test_a_comparison_searches_each_document_without_the_names() -> None:
    from docqa.answering.scope_choice import without_names

    topic = without_names("the termination clauses of the Dynamex and the Accuray agreements", FOLDER[:2])
    assert "Dynamex" not in topic and "Accuray" not in topic and "termination clauses" in topic


def test_a_one_word_name_beside_a_three_word_one_still_names_its_document() -> None:
    """A word of one document's name alone names it, however many words named the other: "Northwind Trading
    Partners" (three words) and "Zentrix" (one) are both compared; a third document sharing a word of the
    question's topic through its version ("FIRST AMENDMENT") is not."""
    folder = [
        NamedDocument(1, ("NorthwindTradingPartnersInc_2019_EX-10.1_Supply Agreement.txt",)),
        NamedDocument(2, ("ZentrixCorp_2020_EX-10.4_License Agreement.txt",)),
        NamedDocument(3, ("Halvorsen Foods - FIRST AMENDMENT TO SUPPLY AGREEMENT.txt",)),
        NamedDocument(4, ("Quillon Medical - Distribution Agreement.txt",)),
    ]
    decision = choose_scope(
        "Compare the right of first refusal clauses of the Northwind Trading Partners and the Zentrix agreements",
        folder,
    )
    assert decision.scope == "compare" and decision.documents == (1, 2)
