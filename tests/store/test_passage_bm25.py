"""The second pass's BM25, computed from the passages' stored stems, equals FTS5's own bm25() on a real index."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from docqa.core.types import ChunkDraft
from docqa.profiles.sec.profile import SecWeights
from docqa.profiles.sec.statements import BALANCE_SHEET, CASH_FLOW_STATEMENT, asked_statements
from docqa.store.audit import orphan_problems
from docqa.store.db import SqliteStore
from docqa.store.keyword import index as keyword_index
from docqa.store.keyword import lexical, passage_bm25, passage_stems, passages
from docqa.store.keyword.fts5_tables import Fts5Tables, varints
from docqa.store.keyword.ranking import DEFAULT_RANKING
from docqa.store.keyword.term_stats import TermStats
from tests.support.profiles import PROFILES
from tests.support.store_rows import bm25, save

CLAUSES = [
    "The Supplier may terminate this Agreement on ninety days' notice; termination does not end accrued fees.",
    "Fees are payable quarterly. Late fees accrue at one percent a month. Notice of late payment by e_mail.",
    "This Agreement is governed by the laws of the State of New York. Naïve readings are not binding.",
    "Confidential information stays confidential for five years after termination or expiry.",
    "\n\n".join(["Each party indemnifies the other against third-party claims."] * 12),  # several passages
]


def _store(tmp_path: Path) -> tuple[SqliteStore, list[int]]:
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True)
    documents = []
    for n in range(6):
        chunks = [f"Master Agreement {n} between Acme{n} Corp and Beta{n} LLC. " + CLAUSES[n % len(CLAUSES)]]
        chunks += [CLAUSES[(n + k) % len(CLAUSES)] * (k + 1) for k in range(1, 4)]
        saved = store.save_document(
            collection_id=coll.id, source=f"d{n}", name=f"d{n}.txt", sha256=str(n), size_bytes=1, pages=1,
            warnings=[], chunks=[ChunkDraft(i, t, 0, len(t), 1, 1, len(t.split())) for i, t in enumerate(chunks)],
            embeddings=None,
        )  # fmt: skip
        documents.append(saved.document_id)
    return store, documents


@pytest.mark.parametrize("weights", [(0.0, 1.0), (DEFAULT_RANKING.title_weight, 1.0), (0.0, 0.0)])
@pytest.mark.parametrize(
    "question",
    [
        "Can the supplier terminate on notice, and what does termination end?",  # two terms, one stem
        "Which fees are late and how is notice given by e_mail?",  # e_mail: a phrase of two tokens to FTS5
        "naive readings of the governing laws",  # diacritics folded on one side only
        "Who indemnifies whom against claims?",  # a term in many passages of one chunk
        "Acme2 Beta2 master agreement",  # title words
        "zebra",  # in no passage
    ],
)
def test_scores_equal_fts5_bm25(tmp_path: Path, question: str, weights: tuple[float, float]) -> None:
    store, documents = _store(tmp_path)
    stats = TermStats(Fts5Tables())
    terms = lexical.query_terms(question)
    query = lexical.match_expression(terms)
    assert query is not None
    with store.session() as session:
        stats.refresh(session)
        for document in documents:
            rows = keyword_index._document_rows(session, document)
            assert rows is not None
            ours = passage_bm25.document_passages(
                session, stats, terms, rows, document, weights, passages.PASSAGES_PER_CHUNK
            )
            theirs = session.execute(
                text(
                    f"SELECT rowid, -bm25(passage_fts, {weights[0]}, {weights[1]}) FROM passage_fts "
                    "WHERE passage_fts MATCH :q AND rowid >= :lo AND rowid < :hi ORDER BY rowid"
                ),
                {"q": query, "lo": rows[0], "hi": rows[1]},
            ).all()
            assert sorted(r for r, _ in ours) == [r for r, _ in theirs]
            expected = {int(r): float(s) for r, s in theirs}
            for rowid, score in ours:
                assert score == pytest.approx(expected[rowid], rel=1e-12, abs=1e-12), (question, rowid)
            assert [s for _, s in ours] == sorted((s for _, s in ours), reverse=True)
    store.close()


def test_counts_are_forgotten_when_the_index_changes(tmp_path: Path) -> None:
    """The document frequencies are cached; a write changes FTS5's totals and the cache starts over,
    so scores never use counts from before a write."""
    store, _ = _store(tmp_path)
    stats = TermStats(Fts5Tables())
    with store.session() as session:
        before = stats.refresh(session)
        assert before == Fts5Tables().totals(session) and before.rows > 0
        assert stats.document_frequency(session, "indemnifi") > 0
        old = stats.document_frequency(session, "zebra")
    coll = store.collection("c")
    store.save_document(
        collection_id=coll.id, source="z", name="z.txt", sha256="z", size_bytes=1, pages=1, warnings=[],
        chunks=[ChunkDraft(0, "A zebra clause.", 0, 15, 1, 1, 3)], embeddings=None,
    )  # fmt: skip
    with store.session() as session:
        assert stats.document_frequency(session, "zebra") == old == 0  # cached: still the old count
        after = stats.refresh(session)
        assert after.rows == before.rows + 1
        assert stats.document_frequency(session, "zebra") == 1
    store.close()


def test_varints_read_sqlite_encoding() -> None:
    assert varints(bytes([0x05])) == [5]
    assert varints(bytes([0x86, 0x8D, 0x20, 0x07])) == [100_000, 7]
    assert varints(bytes([0xFF] * 8 + [0xFF])) == [2**64 - 1]


def test_control_characters_in_text_never_pass_for_match_marks(tmp_path: Path) -> None:
    assert lexical.index_text("a\x01b\x02c\td\ne") == "a b c\td\ne"


def test_heading_texts_find_numbered_titles_and_capital_lines() -> None:
    body = "\n".join(
        [
            "  15.5 Severability. If any law says otherwise",  # numbered title, then body
            "GOVERNING LAW",  # a line in capitals
            "Section 2. Retention of Agent;  Compensation",
            "  4.1 Formation of the Channel   (a) During the term",  # ends at a wide gap
            "2. The Company shall pay whatever falls due under this agreement to the other party promptly.",
            "The Company agrees.",  # no number, not capitals: body text
        ]
    )
    assert passage_stems.heading_texts(body) == [
        "Severability", "GOVERNING LAW", "Retention of Agent", "Formation of the Channel"
    ]  # fmt: skip


def test_one_capitalised_word_above_a_paragraph_is_a_heading_and_a_table_label_is_not() -> None:
    body = "\n".join(
        [
            "Employees",  # a filing's run-in heading, a sentence below it
            "As of December 31, 2017, our Company had approximately 61,800 employees.",
            "Total",  # a table's label: a short line below
            "1,234 5,678",
            "COMPETITION.",
            "The markets in which we compete are highly competitive and changing.",
            "Inc",  # too short for a title
            "Our Company operates through its divisions and subsidiaries worldwide.",
        ]
    )
    assert passage_stems.heading_texts(body) == ["Employees", "COMPETITION"]


def test_a_filings_item_heading_keeps_its_number() -> None:
    body = "ITEM 2. PROPERTIES\nItem 1A. Risk Factors\nSection 2. Retention of Agent;\n12.3 Governing Law."
    assert passage_stems.heading_texts(body) == [
        "Item 2 PROPERTIES", "Item 1A Risk Factors", "Retention of Agent", "Governing Law"
    ]  # fmt: skip


def test_a_statements_title_heads_its_line_before_the_companys_name_or_dates_and_nowhere_else() -> None:
    body = "\n".join(
        [
            "Consolidated Statements of Cash Flows GENERAL MILLS, INC. AND SUBSIDIARIES",  # too long for a title line
            "Consolidated Statements of Income Corning Incorporated and Subsidiary Companies",
            "Consolidated Balance Sheets — December 31, 2018 and 2017",  # digits
            "Condensed Consolidated Statements of Earnings (Unaudited)",
            "Consolidated Statements of Operations 63",  # a contents line and its page
            "Consolidated Balance Sheets.",  # the end of a sentence wrapped onto its own line
            "Consolidated Statements of Operations Data:",  # Item 6's table of years
            "Balance Sheet:",  # MD&A's run-in label
            "Consolidated statements of operations data for the years ended",
        ]
    )
    assert passage_stems.heading_texts(body) == [
        "Consolidated Statements of Cash Flows",
        "Consolidated Statements of Income",
        "Consolidated Balance Sheets",
        "Condensed Consolidated Statements of Earnings",
    ]


def test_chinese_section_headings_are_found_in_the_text_as_written() -> None:
    body = "第二节 概览\n一、发行人基本情况\n（二）无形资产截至 2010 年 12 月 31 日，公司情况：\n本公司认为一、二"
    assert passage_stems.heading_texts(body) == ["概览", "发行人基本情况", "无形资产截至"]  # a title ends at a digit
    stemmer = passage_stems.Stemmer()
    (row,) = passage_stems.stored_rows(stemmer, [(1, body)])
    bigrams = "概览 发行 行人 人基 基本 本情 情况 无形 形资 资产 产截 截至"
    assert row["headings"] == passage_stems.encode(stemmer.ids(bigrams))


def test_a_chinese_heading_run_into_the_sentence_before_it_is_found() -> None:
    body = "负责供应商的管理。（四）发行人控股子公司基本情况截至本招股意向书签署之日，发行人共拥有六家控股子公司"
    assert passage_stems.heading_texts(body) == ["发行人控股子公司基本情况截至本招股意向书"]
    assert passage_stems.heading_texts("公司认为（一）与（二）两项均可") == []  # not after a sentence's end


def test_chinese_sentences_and_table_rows_are_no_numbered_headings() -> None:
    rows = [
        "2010 年 6 月 22 日，江苏省商务厅出具了批复。",
        "1 江苏爱康实业有限责任公司 4,533.00 33.27",
        "3 南通高胜公司 国有法人股",
    ]
    assert passage_stems.heading_texts("\n".join(rows)) == []
    assert passage_stems.heading_texts("12.3 Governing Law.") == ["Governing Law"]  # English titles as before


def test_stem_arrays_count_terms_and_phrases_as_fts5_does() -> None:
    stemmer = passage_stems.Stemmer()
    text = "Terminated: the TERMINATION of e_mail notices; naïve e-mail, terminate e_mail"
    assert [s for w in text.replace(":", " ").replace(";", " ").split() for s in stemmer.stems([w])[0]] == [
        "termin", "the", "termin", "of", "e", "mail", "notic", "naiv", "e", "mail", "termin", "e", "mail",
    ]  # fmt: skip
    ids = [passage_stems.stem_id(s) for s in ("termin", "e", "mail", "notic", "ai")]
    termin, e, mail, notic, ai = ([i] for i in ids)
    arrays = [passage_stems.encode(stemmer.ids(text)), passage_stems.encode(stemmer.ids("mail")), b""]
    found = passage_stems.counts(arrays, [termin, e + mail, mail + e, mail + notic, ai, [], e + mail + e])
    assert found.tolist() == [[3, 0, 0], [3, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]
    # a phrase never runs from one array into the next
    assert passage_stems.counts([passage_stems.encode(e), passage_stems.encode(mail)], [e + mail]).tolist() == [[0, 0]]
    assert stemmer.stems(["e_mail", "__", "Naïve"]) == [["e", "mail"], [], ["naiv"]]


def _rankings(
    tmp_path: Path, chunks: list[str], question: str, weights: list[tuple[Any, ...]]
) -> tuple[tuple[int, int], list[list[int]]]:
    """One more document among _store's (its words then rare, their IDF high): its passage rowid range, and
    its passages' rowids ranked by the second pass for each HeadingBonus's arguments."""
    store, _ = _store(tmp_path)
    saved = save(store, store.collection("c").id, "d.txt", chunks, None)
    stats = TermStats(Fts5Tables())
    terms = lexical.query_terms(question)
    with store.session() as session:
        stats.refresh(session)
        rows = keyword_index._document_rows(session, saved.document_id)
        assert rows is not None
        ranked = [
            [rowid for rowid, _ in passage_bm25.document_passages(
                session, stats, terms, rows, saved.document_id, (0.0, 1.0), passages.PASSAGES_PER_CHUNK,
                passage_bm25.HeadingBonus(*w)
            )]
            for w in weights
        ]  # fmt: skip
    store.close()
    return rows, ranked


def test_a_term_in_a_heading_lifts_its_passage(tmp_path: Path) -> None:
    """Two passages of one contract use the question's words; the one that uses them more wins on
    BM25 alone, and the section titled with one of them wins with the heading weight."""
    chunks = [
        "Any assignment of receivables needs consent, and consent is given in writing by the lender.",
        "12. Assignment. Neither party may transfer this Agreement to any third party, in whole or in part, "
        "without the prior written consent of the other party, which shall not be unreasonably withheld.",
    ]
    rows, (plain, headed) = _rankings(
        tmp_path, chunks, "assignment consent", [(0.0,), (DEFAULT_RANKING.heading_weight,)]
    )
    titled_row = rows[0] + passages.PASSAGES_PER_CHUNK  # the second chunk's first passage
    assert plain == [rows[0], titled_row]
    assert headed == [titled_row, rows[0]]


def test_filing_headings_are_read_in_title_case_and_by_item_number() -> None:
    body = "\n".join(
        [
            "Consolidated Statements of Cash Flows",
            "Years ended December 31",  # a lowercase word: a line of the table, not a title
            "Cash Flows from Operating Activities",
            "Depreciation and amortization 1,488 1,544 1,474",  # a row: it has figures
            "Item 7. Management's Discussion and Analysis of Financial Condition",
            "Note 5. Acquisitions and Divestitures",
            "Net sales rose in every segment, as the table below shows.",
        ]
    )
    assert passage_stems.heading_texts(body) == [
        "Consolidated Statements of Cash Flows",
        "Cash Flows from Operating Activities",
        "Item 7 Management's Discussion and Analysis of Financial Condition",  # an item keeps its number
        "Acquisitions and Divestitures",
    ]


def test_a_passage_keeps_the_last_headings_before_it() -> None:
    stemmer = passage_stems.Stemmer()
    passages = [
        (1, "Consolidated Balance Sheets\nCash and equivalents 2,100 1,900"),
        (2, "Inventories 4,300 4,100\nTotal assets 36,500 37,987"),
        (3, "GOVERNING LAW\nThe laws of Delaware govern."),
        (4, "Notices are given in writing."),
    ]
    rows = passage_stems.stored_rows(stemmer, passages)
    expected = [
        "Consolidated Balance Sheets",
        "Consolidated Balance Sheets",  # the statement's later rows are still the statement's
        "Consolidated Balance Sheets\nGOVERNING LAW",
        "Consolidated Balance Sheets\nGOVERNING LAW",
    ]
    assert [r["headings"] for r in rows] == [passage_stems.encode(stemmer.ids(h)) for h in expected]


def test_the_statement_a_question_needs_comes_before_the_prose_about_it(tmp_path: Path) -> None:
    """The discussion repeats the question's words; the statement names the figure in its own words
    ("purchases of property, plant and equipment") under the title of the statement the question needs."""
    chunks = [
        "Capital expenditures rose in 2018. Capital expenditure plans and the capital expenditure outlook are "
        "discussed with cash flow trends; cash flow from operations funded the capital expenditures.",
        "Consolidated Statement of Cash Flows\nNet income 5,363 4,869\n\n" + "Other items 10 20\n" * 40,
        "Purchases of property, plant and equipment (1,577) (1,373)\nProceeds from sales 262 49",
    ]
    heading = DEFAULT_RANKING.heading_weight
    question = "What is the capital expenditure shown in the cash flow statement?"
    statements = tuple(asked_statements(question))
    assert statements == (CASH_FLOW_STATEMENT,)
    titled = tuple((s, SecWeights().statement) for s in statements)
    rows, (plain, named) = _rankings(tmp_path, chunks, question, [(heading,), (heading, titled)])
    chunk_of = lambda rowid: (rowid - rows[0]) // passages.PASSAGES_PER_CHUNK  # noqa: E731
    assert chunk_of(plain[0]) == 0  # without the statement's bonus the prose wins
    assert chunk_of(named[0]) in (1, 2)  # the statement, its title carried to its later rows


@pytest.mark.parametrize(
    ("heading", "indexed"),
    [
        ("Off-Balance Sheet Arrangements", "OffBalanceSheet Arrangements"),  # MD&A's, in most 10-Ks
        ("Balance Sheet Location", "BalanceSheet Location"),  # ASC 815's derivative tables
        ("Location on Income Statement", "Location on IncomeStatement"),
        ("Key Balance Sheet Data", "Key BalanceSheet Data"),
        ("Gross amounts offset in the balance sheet", "Gross amounts offset in the balancesheet"),
        ("Condensed Consolidating Statements of Cash Flows", "Condensed ConsolidatingStatementsofCashFlows"),
        ("Consolidated Balance Sheets", "Consolidated Balance Sheets"),  # the statement itself
        ("Condensed Consolidated Statements of Cash Flows (Unaudited)", None),
        ("Balance Sheet", None),
    ],
)
def test_a_statements_title_used_as_a_modifier_is_indexed_as_one_word(heading: str, indexed: str | None) -> None:
    assert passage_stems.indexed_heading(heading) == (indexed or heading)


def test_a_balance_sheet_question_is_not_steered_to_off_balance_sheet_arrangements(tmp_path: Path) -> None:
    chunks = [
        "Off-Balance Sheet Arrangements\nWe have no off-balance sheet arrangements. Total assets of unconsolidated "
        "entities are not in our total assets; total assets of such entities were small.",
        "Consolidated Balance Sheets\nInventories 4,300 4,100\nTotal assets 36,500 37,987",
    ]
    question = "What were total assets on the balance sheet at the end of 2018?"
    statements = tuple(asked_statements(question))
    assert statements == (BALANCE_SHEET,)
    titled = tuple((s, SecWeights().statement) for s in statements)
    rows, (ranked,) = _rankings(tmp_path, chunks, question, [(DEFAULT_RANKING.heading_weight, titled)])
    assert (ranked[0] - rows[0]) // passages.PASSAGES_PER_CHUNK == 1


def test_stems_are_built_for_an_older_index_and_repaired_when_missing(tmp_path: Path) -> None:
    """An index from before the stems (schema 3) gets them when opened; stems lost or left over by
    damage are found by `docqa check` and mended, and the search answers as before."""
    store, documents = _store(tmp_path)
    coll = store.collection("c")
    question = "Which fees are late and how is notice given by e_mail?"

    def search() -> list[tuple[int, float]]:  # inside one document: its passages' stems rank its chunks
        return bm25(store, coll.id, question, 10, documents[1])

    expected = search()
    assert len(expected) > 1
    store.close()
    path = tmp_path / "db.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE passage_stems")
        db.execute("PRAGMA user_version = 3")
        db.execute("DROP TABLE alembic_version")  # index version 3 was written by a docqa from before Alembic
    store = SqliteStore(path, reader=PROFILES)
    assert search() == expected
    assert orphan_problems(store) == []
    store.close()

    with sqlite3.connect(path) as db:
        chunk = expected[0][0]
        span = (chunk * passages.PASSAGES_PER_CHUNK, (chunk + 1) * passages.PASSAGES_PER_CHUNK)
        db.execute("DELETE FROM passage_stems WHERE id >= ? AND id < ?", span)
        db.execute("INSERT INTO passage_stems(id, body, headings) VALUES (?, x'', x'')", (10**6 * 64,))
    store = SqliteStore(path, reader=PROFILES)
    assert search() != expected  # its best chunk's passages cannot be counted
    assert orphan_problems(store) == [
        "1 orphan passage-stem rows without a chunk",
        "1 chunk rows missing from the keyword index or its stems",
    ]
    orphan_problems(store, repair=True)
    assert orphan_problems(store) == []
    assert search() == expected
    store.close()


def test_a_count_read_after_the_total_cannot_break_the_idf() -> None:
    """A document committed between reading the index's total and a term's count (or a cached count) can
    make the count exceed the total: the IDF is then floored as FTS5 floors common terms, not log() of a
    negative (which raised in a search that raced a queued ingest on Postgres)."""
    assert passage_bm25.term_idf(100, 10) == pytest.approx(math.log(90.5 / 10.5))
    assert passage_bm25.term_idf(100, 60) == 1e-6  # in more than half the passages
    assert passage_bm25.term_idf(100, 140) == 1e-6  # more than all of them: floored, not an error
