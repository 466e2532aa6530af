"""The passage that supports an answer, and its page (docqa.answering.support)."""

from __future__ import annotations

from docqa.answering.support import claims_for, supporting_passage
from tests.support.chunks import paged_chunk

# The agreement's title page names the parties and the termination clause's heading; the clause is on page 3.
CONTRACT = paged_chunk({
    1: "MASTER SERVICES AGREEMENT\nbetween Acme Ltd and Beta GmbH\nTermination, notice and renewal terms apply.\n"
       "Acme Ltd provides services to Beta GmbH.\n",
    2: "2. Services. Acme Ltd shall provide the services in Schedule A.\nAcme Ltd and Beta GmbH agree on fees.\n",
    3: "14. Termination. Either party may terminate this Agreement by giving 90 days' written notice.\n"
       "Termination does not affect accrued rights.\n",
})  # fmt: skip


def test_the_cited_page_is_the_clause_not_the_page_with_the_answer_s_common_words() -> None:
    answer = "Acme Ltd or Beta GmbH may terminate the agreement on 90 days' written notice [1]."
    support = supporting_passage(claims_for(answer, 1, {1}), CONTRACT)
    assert support is not None and support.page == 3
    assert "90 days' written notice" in support.quote and support.quote in CONTRACT.text


def test_only_the_sentences_citing_a_source_speak_for_it() -> None:
    answer = "Fees are set in Schedule A [2]. Notice of termination is 90 days [1]."
    assert claims_for(answer, 2, {1, 2}) == "Fees are set in Schedule A [2]."
    assert claims_for(answer, 1, {1, 2}).strip() == "Notice of termination is 90 days [1]."
    assert claims_for("Schedule A [1, 2].", 2, {1, 2}) == "Schedule A [1, 2]."
    assert claims_for("No marks here.", 1, set()) == "No marks here."
    assert claims_for(answer, 3, {1, 2}) == ""
    assert supporting_passage("", CONTRACT) is None
    assert supporting_passage("zebra quantum", CONTRACT) is None


def test_a_number_the_answer_repeats_finds_its_table_row() -> None:
    filing = paged_chunk({
        47: "Consolidated Statement of Cash Flows\nNet income 5,363 4,869\nDepreciation and amortization 1,488\n",
        48: "Cash Flows from Investing Activities\nPurchases of property, plant and equipment (PP&E) (1,577) (1,373)\n"
            "Proceeds from sale of PP&E 262 49\n",
    })  # fmt: skip
    support = supporting_passage("3M's capital expenditure in FY2018 was $1,577 million [1].", filing)
    assert support is not None and support.page == 48 and "(1,577)" in support.quote


def test_a_quote_stays_on_the_page_that_holds_it() -> None:
    """A run across a page break named the later page for a passage on the earlier one (issue 42, 3)."""
    filing = paged_chunk({
        46: "Liquidity and Capital Resources\nThe company repurchased shares for $2.1 billion in 2018.\n"
            "Dividends paid were $3.2 billion.\n",
        47: "Contractual obligations\nLong-term debt maturities follow.\n",
    })  # fmt: skip
    support = supporting_passage(
        "It repurchased $2.1 billion of shares and paid $3.2 billion of dividends [1].", filing
    )
    assert support is not None and support.page == 46
    assert "Contractual" not in support.quote and "$3.2 billion" in support.quote
