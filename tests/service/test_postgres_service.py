"""docqa with DOCQA_DATABASE_URL: the whole service on a real Postgres (pgvector) answers as it does on
SQLite and FAISS, and the database's errors name it (without its password)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from docqa.cli.main import main
from docqa.core.errors import DatabaseUnavailableError
from docqa.core.settings import ChunkingSettings, RetrievalSettings
from docqa.llama.embedder import LlamaEmbedder
from docqa.service import DocQA
from docqa.store import schema
from tests.support.paths import SAMPLE_DOCS, make_settings

QUESTIONS = [
    "When is the Effective Date of the services agreement?",
    "Who is the account manager replaced by, and within how many days?",
    "What are the support hours?",
    "What is the first response target for a severity 1 incident?",
    "合同编号是多少？",
    "乙方是哪家公司？",
    "What was the revenue in 2025?",
    "Which law governs the agreement?",
    "How are invoices paid?",
]


def _top3(qa: DocQA) -> list[list[tuple[str, int]]]:
    return [[(c.document_name, c.ordinal) for c in qa.retrieve(q, 3)] for q in QUESTIONS]


@pytest.mark.slow
def test_hybrid_retrieval_gives_the_same_top3_on_both_stores(
    tmp_path: Path, postgres_url: str, embedder: LlamaEmbedder
) -> None:
    options = {
        "retrieval": RetrievalSettings(retriever="hybrid"),
        "chunking": ChunkingSettings(max_tokens=160, overlap_tokens=16),
    }
    sqlite = DocQA(make_settings(tmp_path / "a", **options), embedder=embedder)
    postgres = DocQA(make_settings(tmp_path / "b", database_url=postgres_url, **options), embedder=embedder)
    try:
        for qa in (sqlite, postgres):
            report = qa.ingest([SAMPLE_DOCS])
            assert report.embeddings and all(f.status == "added" for f in report.files), report.files
        assert postgres.indexes.get(postgres.collection()) is not None
        assert sqlite.count_chunks() == postgres.count_chunks() > 12
        assert _top3(sqlite) == _top3(postgres)
        assert not (tmp_path / "b").exists()  # nothing of the store in a data home
        assert postgres.check()[0].ok and all(report.ok for report in postgres.check())
    finally:
        sqlite.close()
        postgres.close()


def test_cli_ingests_lists_and_upgrades_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    env = {"DOCQA_DATABASE_URL": postgres_url, "DOCQA_DATA_DIR": str(tmp_path / "home")}
    runner = CliRunner()
    status = runner.invoke(main, ["db", "status", "--json"], env=env)
    assert status.exit_code == 3 and json.loads(status.output)["revision"] is None  # a new database: upgrade it
    first = runner.invoke(main, ["db", "upgrade"], env=env)
    assert first.exit_code == 0 and f"schema (none) -> {schema.HEADS['postgresql']}" in first.output
    assert f"already at schema {schema.HEADS['postgresql']}" in runner.invoke(main, ["db", "upgrade"], env=env).output
    ingest = runner.invoke(main, ["ingest", str(SAMPLE_DOCS / "services_agreement_en.txt")], env=env)
    assert ingest.exit_code == 0, ingest.output
    listed = runner.invoke(main, ["docs", "list", "--json"], env=env)
    assert listed.exit_code == 0 and "services_agreement_en.txt" in listed.output
    assert runner.invoke(main, ["check"], env=env).exit_code == 0
    assert runner.invoke(main, ["db", "status"], env=env).exit_code == 0  # up to date


def test_an_unreachable_database_is_named_without_its_password(tmp_path: Path) -> None:
    url = "postgresql+psycopg://docqa:s3cret@127.0.0.1:1/docqa"
    with pytest.raises(DatabaseUnavailableError) as caught:
        DocQA(make_settings(tmp_path, database_url=url))
    assert "127.0.0.1:1/docqa" in str(caught.value) and "s3cret" not in str(caught.value)
    result = CliRunner().invoke(main, ["docs", "list"], env={"DOCQA_DATABASE_URL": url})
    assert result.exit_code != 0 and "127.0.0.1:1" in result.output and "s3cret" not in result.output
    assert "Traceback" not in result.output


def test_ingest_queue_hands_files_to_workers_and_docs_list_shows_them(tmp_path: Path, postgres_url: str) -> None:
    env = {"DOCQA_DATABASE_URL": postgres_url, "DOCQA_DATA_DIR": str(tmp_path / "home")}
    runner = CliRunner()
    queued = runner.invoke(main, ["ingest", "--queue", str(SAMPLE_DOCS)], env=env)
    assert queued.exit_code == 0 and "4 queued for `docqa worker`" in queued.output, queued.output
    assert "skipped  1 file of types docqa does not read: .py (1)" in queued.output  # issue 40, item 6
    listed = runner.invoke(main, ["docs", "list"], env=env)
    assert listed.exit_code == 0 and listed.output.count("queued") == 4, listed.output
    rows = json.loads(runner.invoke(main, ["docs", "list", "--json"], env=env).output)
    assert sorted(r["name"] for r in rows) == sorted(p.name for p in SAMPLE_DOCS.iterdir() if p.suffix != ".py")
    assert all(r["status"] == "queued" and r["progress"]["done"] == 0 for r in rows)
    elsewhere = tmp_path / "nowhere"
    no_database = runner.invoke(main, ["ingest", "--queue", str(SAMPLE_DOCS)], env={"DOCQA_DATA_DIR": str(elsewhere)})
    assert no_database.exit_code != 0 and "DOCQA_DATABASE_URL" in no_database.output
    assert not elsewhere.exists()  # refused before any data home is made
    # a password cannot be queued (it is never kept): refused, nothing queued (issue 60, item 8)
    with_password = runner.invoke(main, ["ingest", "--queue", "--password", "pw", str(SAMPLE_DOCS)], env=env)
    assert with_password.exit_code == 2 and "--password cannot go with --queue" in with_password.output
    assert len(json.loads(runner.invoke(main, ["docs", "list", "--json"], env=env).output)) == len(rows)


def test_check_finds_and_removes_originals_in_the_database_that_no_document_holds(
    tmp_path: Path, postgres_url: str
) -> None:
    with DocQA(make_settings(tmp_path, database_url=postgres_url), None, None) as qa:
        assert qa.originals.shared is not None
        qa.originals.shared.put("cd" + "1" * 62, b"a worker stopped before its document was written")
        (report,) = [r for r in qa.check() if r.collection == "(all collections)"]
        assert report.problems == ["1 kept original file(s) that no document holds"]
        qa.check(repair=True)
        assert qa.originals.shared.kept() == set()
