"""`docqa eval` and the retrieval it measures: the scoring rule, a small QA set over sample_docs
through the real CLI, and the keyword index's document-head title (with its migration)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from docqa.cli.main import main
from docqa.core.types import ChunkDraft, RetrievedChunk
from docqa.eval.evaluation import EvalRow, declines, first_hit, load_rows, token_f1
from docqa.eval.scoring import is_hit
from docqa.store.db import SqliteStore
from docqa.store.keyword.passages import PASSAGES_PER_CHUNK, split_passages
from tests.support.paths import SAMPLE_DOCS
from tests.support.profiles import PROFILES
from tests.support.store_rows import bm25


def test_the_hit_rule_of_the_data_readme() -> None:
    assert is_hit("The Term shall be “five (5) years”.", 'the term shall be "five (5) years"')
    long_answer = " ".join(f"w{i}" for i in range(60))
    assert is_hit("intro " + " ".join(f"w{i}" for i in range(25)) + " cut", long_answer)  # first 20 words
    assert not is_hit("w0 w1 w2", long_answer)
    assert is_hit("甲方应于\n三十日内付款", "甲方应于 三十日内付款")
    assert not is_hit("anything", "")


def test_token_f1_and_declines() -> None:
    assert (
        token_f1("EUR 184.6 million", ["Revenue was EUR 184.6 million"]) == 0.8
    )  # tokens: eur 184 6 million, against 6 in the reference
    assert token_f1("三十日", ["三十日内"]) > 0.8
    assert token_f1("nothing alike", ["EUR 184.6"]) == 0.0
    assert declines("The documents do not answer the question.")
    assert declines("文件中未提及该事项。")
    assert not declines("The notice period is 60 days [1].")


def _chunk(doc: int, text: str, pages: tuple[int, int] = (1, 1)) -> RetrievedChunk:
    return RetrievedChunk(1, doc, "d", 0, text, pages[0], pages[1], 0.0)


def test_first_hit_needs_the_rows_document_and_can_count_pages() -> None:
    row = EvalRow("r", "q", "c", "a.pdf", ("net revenue",), False, "span", pages=(7,))
    chunks = [_chunk(2, "net revenue"), _chunk(1, "other", (6, 8)), _chunk(1, "Net  Revenue")]
    assert first_hit(chunks, 1, row, by_page=False) == 3  # rank 1 is another document's chunk
    assert first_hit(chunks, 1, row, by_page=True) == 2  # rank 2 holds the answer's page


def _qa_set(folder: Path) -> Path:
    for name in ("services_agreement_en.txt", "supply_contract_zh.txt", "operations_handbook.md"):
        shutil.copy(SAMPLE_DOCS / name, folder / name)
    contract = (folder / "services_agreement_en.txt").read_text(encoding="utf-8")
    handbook = (folder / "operations_handbook.md").read_text(encoding="utf-8")
    rows = [
        {"id": "1", "question": "Which law governs the services agreement?", "category": "law",
         "doc": "services_agreement_en.txt", "answers": [{"text": contract[contract.index("laws of"):][:40]}],
         "is_impossible": False, "answer_type": "span"},
        {"id": "2", "question": "When is standard support available?", "category": "support",
         "doc": "operations_handbook.md", "answers": [{"text": handbook[handbook.index("Monday to"):][:30]}],
         "is_impossible": False, "answer_type": "span"},
        {"id": "3", "question": "Who is the CEO of Mars Corp?", "category": "law",
         "doc": "services_agreement_en.txt", "answers": [], "is_impossible": True, "answer_type": "none"},
    ]  # fmt: skip
    qa_file = folder / "qa.jsonl"
    qa_file.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return qa_file


def test_docqa_eval_on_a_small_set(tmp_path: Path) -> None:

    qa_file = _qa_set(tmp_path)
    args = ["eval", str(qa_file), "--no-embeddings", "--json", "--k", "1,2", "--data-dir", str(tmp_path / "data")]
    args += ["--extra", str(tmp_path / "supply_contract_zh.txt")]  # a distractor
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    assert report["questions"] == 2 and report["skipped_not_answerable"] == 1
    assert report["recall@2"] == 1.0 and report["mrr"] > 0.5
    assert set(report["by_category"]) == {"law", "support"}
    assert report["retriever"] == "bm25" and report["ingest"]["added"] == 3
    details = tmp_path / "details.jsonl"
    again = CliRunner().invoke(main, [*args, "--scope", "document", "--details", str(details)])  # index reused
    report = json.loads(again.output[again.output.index("{") :])
    assert report["ingest"]["unchanged"] == 3 and report["scope"] == "document" and report["recall@1"] == 1.0
    rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["1", "2"] and [r["rank"] for r in rows] == [1, 1]
    for row in rows:  # document scope: everything retrieved is the row's own document
        assert row["retrieved"] and {c["document_id"] for c in row["retrieved"]} == {row["document_id"]}


@pytest.mark.slow
def test_docqa_eval_generates_answers_together_and_scores_them(tmp_path: Path) -> None:
    """--answers with the demo model: every row is asked (at once, through the batching engine), the
    answerable ones scored by token F1, the impossible one by whether docqa declined."""

    qa_file = _qa_set(tmp_path)
    args = ["eval", str(qa_file), "--no-embeddings", "--json", "--answers", "--data-dir", str(tmp_path / "data")]
    result = CliRunner().invoke(main, args, env={"DOCQA_LLM_MAX_TOKENS": "24", "DOCQA_LLM_N_CTX": "4096"})
    assert result.exit_code == 0, result.output
    answers = json.loads(result.output[result.output.index("{") :])["answers"]
    assert (answers["answered"], answers["impossible"]) == (2, 1)
    assert 0.0 <= answers["f1"] <= 1.0 and answers["declined_when_impossible"] in (0.0, 1.0)
    assert 0.0 <= answers["declined_when_answerable"] <= 1.0


def test_keyword_search_finds_small_returns_big_and_old_indexes_migrate(tmp_path: Path) -> None:
    from sqlalchemy import text

    filler = "\n\n".join(f"Paragraph {i} on delivery schedules, invoices and shipping terms." for i in range(120))
    long_chunk = filler + "\n\nThe notice period for termination is sixty days.\n\n" + filler
    assert len(split_passages(long_chunk)) > 4
    path = tmp_path / "docqa.sqlite3"
    store = SqliteStore(path, reader=PROFILES)
    coll = store.collection("c", create=True)
    drafts = [
        ChunkDraft(0, "SUPPLY AGREEMENT between ACME GMBH and ZENITH LTD. Terms follow.", 0, 60, 1, 1, 12),
        ChunkDraft(1, long_chunk, 60, 60 + len(long_chunk), 1, 1, 2000),
        ChunkDraft(2, "Payment is due within thirty days of the invoice date.", 0, 9, 1, 1, 12),
    ]
    store.save_document(
        collection_id=coll.id, source="s", name="file.txt", sha256="x", size_bytes=1, pages=1, warnings=[],
        chunks=drafts, embeddings=None,
    )  # fmt: skip
    hits = bm25(store, coll.id, "notice period for termination in the agreement with Zenith", 5)
    assert [h[0] for h in hits][:1] == [2]  # the long chunk, found by its one relevant passage
    assert len({h[0] for h in hits}) == len(hits) == 3  # each chunk once, every chunk titled by the head
    store.close()

    with sqlite3.connect(path) as db:  # turn it into a schema-2 index: whole chunks in chunk_fts
        db.execute("DROP TABLE passage_fts")
        db.execute("CREATE VIRTUAL TABLE chunk_fts USING fts5(title, body)")
        db.execute("INSERT INTO chunk_fts(rowid, title, body) SELECT id, 'file.txt', text FROM chunks")
        db.execute("PRAGMA user_version = 2")
        db.execute("DROP TABLE alembic_version")  # schema 2 was written by a docqa from before Alembic
    store = SqliteStore(path, reader=PROFILES)
    assert [h[0] for h in bm25(store, coll.id, "notice period for termination with Zenith", 5)][:1] == [2]
    with store.session() as s:
        tables = {r[0] for r in s.execute(text("SELECT name FROM sqlite_master"))}
        first = s.execute(text(f"SELECT count(*) FROM passage_fts WHERE rowid = {2 * PASSAGES_PER_CHUNK}")).scalar()
    assert "chunk_fts" not in tables and first == 1
    store.delete_document(coll, 1)
    with store.session() as s:
        assert s.execute(text("SELECT count(*) FROM passage_fts")).scalar() == 0  # removed with the chunks
    store.close()


def test_a_follow_up_row_is_searched_with_its_conversation(tmp_path: Path) -> None:
    """A row with `history` (prospectus_zh's dev-2) is asked as docqa's ask path asks a follow-up: its
    earlier user turn steers retrieval (AskRequest.search_text), the assistant's turn does not."""
    qa_file = tmp_path / "qa.jsonl"
    history = [{"role": "user", "content": "Tell me about the supply contract."}, {"role": "assistant", "content": "x"}]
    qa_file.write_text(json.dumps({"id": "f", "question": "And who signed it?", "history": history}) + "\n")
    (row,) = load_rows(qa_file, "doc")
    assert row.earlier == ("Tell me about the supply contract.",)
    assert row.request("c", None).search_text() == "Tell me about the supply contract.\nAnd who signed it?"
    assert row.request("c", 7).document_id == 7 and not row.request("c", 7).use_cache


def test_the_answers_figures_read_as_a_sentence_not_a_dict() -> None:
    """Issue 40, item 7: `eval --answers` printed a Python dict."""
    from docqa.cli.evaluate import answers_line

    line = answers_line(
        {
            "answered": 10,
            "f1": 0.4123,
            "declined_when_answerable": 0.1,
            "impossible": 4,
            "declined_when_impossible": 0.75,
        }
    )
    assert line == (
        "answers: token F1 0.412 over 10 answerable questions, declined 10.0% of them; "
        "declined 75.0% of 4 questions the documents do not answer"
    )
    assert "{" not in line
