"""Alembic migrates both stores: a new SQLite store is made at the newest revision, a store made by a docqa
from before Alembic (no version table, columns and keyword index of an older schema) is brought to it with
its rows kept, and `docqa db status|upgrade` report it; the revision constants match Alembic's own."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from docqa.cli.main import main
from docqa.store import schema
from docqa.store.db import SqliteStore
from tests.support.store_rows import bm25

# A store as docqa wrote it before the `recipe` and `ocr_pages` columns, the answer cache and passages
# with stems (keyword index version 0: whole chunks in chunk_fts).
OLD_STORE = [
    "CREATE TABLE collections (id INTEGER NOT NULL, name VARCHAR(200) NOT NULL, embed_model VARCHAR(500), "
    "embed_dim INTEGER, created_at DATETIME NOT NULL, PRIMARY KEY (id), UNIQUE (name))",
    "CREATE TABLE documents (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, collection_id INTEGER NOT NULL, "
    "source TEXT NOT NULL, name VARCHAR(500) NOT NULL, sha256 VARCHAR(64) NOT NULL, size_bytes INTEGER NOT NULL, "
    "pages INTEGER NOT NULL, status VARCHAR(16) NOT NULL, error TEXT, warnings TEXT NOT NULL, n_chunks INTEGER "
    "NOT NULL, n_tokens INTEGER NOT NULL, created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL, "
    "UNIQUE (collection_id, source))",
    "CREATE TABLE chunks (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, document_id INTEGER NOT NULL, "
    "ordinal INTEGER NOT NULL, text TEXT NOT NULL, first_page INTEGER NOT NULL, last_page INTEGER NOT NULL, "
    "char_start INTEGER NOT NULL, char_end INTEGER NOT NULL, n_tokens INTEGER NOT NULL, page_breaks TEXT NOT NULL, "
    "embedding BLOB)",
    "CREATE VIRTUAL TABLE chunk_fts USING fts5(text)",
    "INSERT INTO collections VALUES (1, 'default', NULL, NULL, '2026-01-01')",
    "INSERT INTO documents VALUES (1, 1, 'old.txt', 'old.txt', 'x', 1, 1, 'ready', NULL, '[]', 1, 9, "
    "'2026-01-01', '2026-01-01')",
    "INSERT INTO chunks VALUES (1, 1, 0, 'The zebra clause governs every shipment.', 1, 1, 0, 41, 9, '[]', NULL)",
]


def test_the_revision_constants_are_alembics_heads() -> None:
    assert {dialect: schema.head(dialect) for dialect in ("postgresql", "sqlite")} == schema.HEADS


def test_a_new_sqlite_store_is_made_at_the_newest_revision(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3")
    assert schema.current(store.engine) == schema.HEADS["sqlite"] and schema.at_head(store.engine)
    SqliteStore(tmp_path / "db.sqlite3").close()  # a second open: nothing to migrate
    with sqlite3.connect(tmp_path / "db.sqlite3") as raw:
        assert raw.execute("SELECT count(*) FROM alembic_version").fetchone()[0] == 1


def test_a_store_from_before_alembic_is_migrated_with_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with sqlite3.connect(path) as raw:
        for statement in OLD_STORE:
            raw.execute(statement)
    store = SqliteStore(path)
    assert schema.current(store.engine) == schema.HEADS["sqlite"]
    documents = store.documents(1)
    assert [d.name for d in documents] == ["old.txt"] and documents[0].recipe is None  # the added column
    assert documents[0].catalog is None and documents[0].as_dict()["catalog"] == {}  # read before the catalog
    assert [chunk_id for chunk_id, _ in bm25(store, 1, "zebra clause", 3)] == [1]  # the index rebuilt
    with sqlite3.connect(path) as raw:
        tables = {name for (name,) in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"answer_cache", "collection_generations", "passage_fts", "passage_stems"} <= tables
    assert "chunk_fts" not in tables


def test_db_status_and_upgrade_on_a_sqlite_data_home(tmp_path: Path) -> None:
    runner = CliRunner()
    home = ["--data-dir", str(tmp_path / "home")]
    missing = runner.invoke(main, ["db", "status", *home])
    assert missing.exit_code != 0 and "no docqa data home" in missing.output
    made = runner.invoke(main, ["db", "upgrade", "--json", *home])
    head = schema.HEADS["sqlite"]
    assert made.exit_code == 0 and json.loads(made.stdout)["revision"] == head, made.output
    status = runner.invoke(main, ["db", "status", *home])
    assert status.exit_code == 0 and f"schema {head}" in status.output and "up to date" in status.output
