"""A document's text cut into the paragraphs a collection question scores (pure logic: no model, no store)."""

from __future__ import annotations

from docqa.answering import packing, paragraphs
from docqa.core.types import RetrievedChunk

SERVICE = "Constellation shall provide the Products & Services to the HOF Entities and their affiliates. " * 8
BODY = (
    "Provided that Constellation is not then in breach of its obligations, neither of the HOF Entities shall "
    "purchase any commodity electricity or natural gas from any other supplier during the Term."
)
# a whole article on one line, as a contract filed as plain text (or read by another PDF tool) often is
ONE_LINE = (
    f"ARTICLE 2 PROVISION OF SERVICES 2.1 Services. (a) {SERVICE} (b) {SERVICE} 2.2 Exclusivity. {BODY} "
    f"2.3 Costs and Expenses. Each party bears its own costs, as set out in Section 2.1 hereof. {SERVICE}"
)


def _pieces(text: str) -> list[str]:
    return [text[s:e] for s, e in paragraphs.paragraphs(text)]


def test_a_one_line_article_is_cut_where_its_numbered_clauses_start() -> None:
    pieces = _pieces(ONE_LINE)
    assert any(
        p.startswith("2.2 Exclusivity. Provided that") and p.rstrip().endswith("during the Term.") for p in pieces
    )
    assert not any(p.startswith("(b) Constellation") for p in pieces)  # a lettered item stays in its clause
    assert not any(p.startswith("2.1 hereof") for p in pieces)  # a reference inside a sentence is no clause
    assert all(len(p) <= paragraphs.PARAGRAPH_CHARS for p in pieces)


def test_its_clause_is_found_by_its_own_title_though_its_body_has_none_of_the_questions_words() -> None:
    chunk = RetrievedChunk(1, 1, "gpaq.txt", 0, ONE_LINE, 1, 1, 1.0)
    found = packing.packable([chunk], {"exclusivity": 4.0, "exclusive": 3.0}, lambda t: len(t) // 4)
    rank, n = found.units[0]
    assert ONE_LINE[slice(*found.spans[rank][n])].startswith("2.2 Exclusivity. Provided")


def test_without_clause_starts_the_block_is_cut_by_length_through_the_clause(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(paragraphs, "CLAUSE_STARTS", False)
    assert not any(p.startswith("2.2 Exclusivity") for p in _pieces(ONE_LINE))


def test_chinese_articles_start_paragraphs_and_a_short_block_stays_whole() -> None:
    article = "本合同自双方签字之日起生效，有效期为三年，期满前三十日内任何一方可以书面通知对方续签。" * 40
    text = f"第十一条 合同期限。{article}第十二条 争议解决。因本合同引起的争议，提交上海仲裁委员会仲裁。"
    assert any(p.startswith("第十二条 争议解决") for p in _pieces(text))
    short = "7.1 Term. The term is five years. 7.2 Renewal. It renews for one year."
    assert _pieces(short) == [short]


def test_a_long_sentence_run_without_clauses_is_cut_after_a_sentence() -> None:
    text = "The parties agree to cooperate in good faith on every matter of this agreement. " * 40
    pieces = _pieces(text)
    assert len(pieces) > 1 and all(p.rstrip().endswith(".") for p in pieces)
