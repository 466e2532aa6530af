"""Derived data rebuilt, not migrated (docqa.store.derived): a data home an older docqa made (its headings read
by older rules, no version recorded) is brought up to date by `docqa reindex`, one document at a time, and by
`docqa ingest` when it finds stale documents; switching document profiles makes documents stale too."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from docqa.api.state import AppState
from docqa.cli.main import main
from docqa.core.settings import RetrievalSettings
from docqa.store import schema
from docqa.store.db import SqliteStore
from tests.support.paths import make_settings
from tests.support.profiles import PROFILES
from tests.support.store_rows import bm25, save

ZH_CHUNK = "负责供应商的管理。（四）发行人控股子公司基本情况截至本招股意向书签署之日，发行人拥有两家子公司。"
EMPLOYEES_CHUNK = "Employees\nAs of December 31, 2017, our Company had approximately 61,800 employees worldwide."
COVER = (
    "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\nFor the fiscal year ended December 31, 2017\n"
    "Commission file number 1-1234\nACME CORP\n(Exact name of registrant as specified in its charter)\n"
)
HEADINGS = "SELECT id / 64, headings FROM passage_stems ORDER BY id"


def _old_home(path: Path) -> dict[str, int]:
    """A data home as a docqa from before the versions left it (schema s0003: before the Chinese headings and
    the heading revisions after it), its documents' headings read by an older rule (none) and its catalog
    entries read before filings were known."""
    store = SqliteStore(path, reader=PROFILES)
    coll = store.collection("c", create=True).id
    chunks = {
        "zh": save(store, coll, "招股说明书.pdf", [ZH_CHUNK], None, sha="zh").chunk_ids[0],
        "en": save(store, coll, "ACME_2017_10K.pdf", [COVER + EMPLOYEES_CHUNK], None, sha="en").chunk_ids[0],
    }
    store.set_catalog_fields(2, {"tags": ["kept"]})  # an uploader's own field
    store.close()
    with sqlite3.connect(path) as raw:
        chunks |= {f"headings_{c}": h for c, h in raw.execute(HEADINGS) if h}
        raw.execute("UPDATE passage_stems SET headings = x''")
        raw.execute(
            """UPDATE documents SET catalog = '{"kind": "document", "tags": ["kept"], "user_fields": ["tags"]}'"""
        )
        raw.execute("ALTER TABLE documents DROP COLUMN derived")
        raw.execute("UPDATE alembic_version SET version_num = 's0003'")
    return chunks


def test_an_old_data_home_is_read_again_by_reindex_one_document_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "home" / "docqa.sqlite3"
    path.parent.mkdir()
    old = _old_home(path)
    assert old["headings_1"] and old["headings_2"]  # the rules of today found a heading in each
    store = SqliteStore(path, reader=PROFILES)  # s0004 to s0010: schema only, nothing read again
    assert schema.current(store.engine) == schema.HEADS["sqlite"]
    with sqlite3.connect(path) as raw:
        assert {h for _, h in raw.execute(HEADINGS)} == {b""}
    assert store.stale_documents() == [1, 2] and store.stale_documents(collection_id=99) == []
    assert store.rederive(1) and store.stale_documents() == [2]  # stopped here, the next run goes on
    store.close()
    runner = CliRunner()
    done = runner.invoke(main, ["reindex", "--json", "--data-dir", str(path.parent)])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) | {"seconds": 0} == {
        "stale": 1,
        "done": 1,
        "seconds": 0,
        "rules": "headings 11; profiles csrc@1,sec@1,contracts@1",
    }
    store = SqliteStore(path, reader=PROFILES)
    with sqlite3.connect(path) as raw:
        assert dict(raw.execute(HEADINGS).fetchall()) == {1: old["headings_1"], 2: old["headings_2"]}
    entry = store.documents(1)[1].as_dict()["catalog"]
    assert entry["kind"] == "filing" and entry["company"] == "ACME CORP" and entry["tags"] == ["kept"]
    assert [c for c, _ in bm25(store, 1, "控股子公司", 3)] == [old["zh"]]
    assert bm25(store, 1, "how many employees", 3)[0][0] == old["en"]
    again = runner.invoke(main, ["reindex", "--data-dir", str(path.parent)])
    assert again.exit_code == 0 and "0 of 0 stale documents" in again.output


def test_ingest_reads_stale_documents_again_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "home" / "docqa.sqlite3"
    path.parent.mkdir()
    _old_home(path)
    note = tmp_path / "note.txt"
    note.write_text("A short note about anvils.")
    runner = CliRunner()
    ran = runner.invoke(
        main, ["ingest", str(note), "--collection", "c", "--no-embeddings", "--data-dir", str(path.parent)]
    )
    assert ran.exit_code == 0, ran.output
    assert (
        "2 documents were read by older rules than this docqa's" in ran.output and "reindexed 2 documents" in ran.output
    )
    assert SqliteStore(path, reader=PROFILES).stale_documents() == []


def test_switching_the_profiles_makes_documents_stale(tmp_path: Path) -> None:
    path = tmp_path / "home" / "docqa.sqlite3"
    path.parent.mkdir()
    store = SqliteStore(path, reader=PROFILES)
    coll = store.collection("c", create=True).id
    save(store, coll, "ACME_2017_10K.pdf", [COVER + EMPLOYEES_CHUNK], None)
    store.close()
    runner = CliRunner()
    plain = runner.invoke(
        main, ["reindex", "--json", "--data-dir", str(path.parent)], env={"DOCQA_RETRIEVAL_PROFILES": "none"}
    )
    assert plain.exit_code == 0 and json.loads(plain.stdout)["done"] == 1, plain.output
    entry = SqliteStore(path).documents(coll)[0].as_dict()["catalog"]
    assert entry["kind"] == "document"  # no profile reads it as a filing now


@pytest.mark.slow
def test_serve_reads_stale_documents_again_when_it_loads_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The API process's loading (docqa serve) brings the data home up to date before it answers."""
    path = tmp_path / "home" / "docqa.sqlite3"
    path.parent.mkdir()
    _old_home(path)
    state = AppState(make_settings(path.parent, retrieval=RetrievalSettings(retriever="bm25")))
    with caplog.at_level(logging.WARNING, logger="docqa.api.state"):
        state.load()
    try:
        assert state.load_error is None and state.qa is not None
        assert "2 documents were read by older rules" in caplog.text and "reindexed 2 documents" in caplog.text
        assert state.qa.store.stale_documents() == []
    finally:
        state.close()
