"""docqa's SQLite store as it was when Alembic took over its migrations: tables, answer cache, FTS5 index.

Every statement holds on a store made by any earlier docqa too: tables are created where missing, the
columns added since are added where missing, and the keyword index is rebuilt where its own version
(PRAGMA user_version, docqa.store.keyword.fts5_tables.SCHEMA_VERSION) is older. Such a store is then at
this revision.

Revision ID: s0001
Revises:
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

from docqa.store.keyword.fts5_tables import Fts5Tables
from docqa.store.keyword.passage_stems import Stemmer

revision = "s0001"
down_revision = None
branch_labels = None
depends_on = None

_TABLES = [
    """CREATE TABLE IF NOT EXISTS collections (
        id INTEGER NOT NULL, name VARCHAR(200) NOT NULL, embed_model VARCHAR(500), embed_dim INTEGER,
        created_at DATETIME NOT NULL, PRIMARY KEY (id), UNIQUE (name))""",
    """CREATE TABLE IF NOT EXISTS documents (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, collection_id INTEGER NOT NULL, source TEXT NOT NULL,
        name VARCHAR(500) NOT NULL, sha256 VARCHAR(64) NOT NULL, size_bytes INTEGER NOT NULL,
        pages INTEGER NOT NULL, status VARCHAR(16) NOT NULL, error TEXT, warnings TEXT NOT NULL,
        n_chunks INTEGER NOT NULL, n_tokens INTEGER NOT NULL, recipe TEXT, ocr_pages TEXT,
        created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL, UNIQUE (collection_id, source),
        FOREIGN KEY(collection_id) REFERENCES collections (id) ON DELETE CASCADE)""",
    "CREATE INDEX IF NOT EXISTS ix_documents_collection_id ON documents (collection_id)",
    # AUTOINCREMENT: IDs are never reused, so a stale FAISS vector can never point at a new chunk.
    """CREATE TABLE IF NOT EXISTS chunks (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, document_id INTEGER NOT NULL, ordinal INTEGER NOT NULL,
        text TEXT NOT NULL, first_page INTEGER NOT NULL, last_page INTEGER NOT NULL, char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL, n_tokens INTEGER NOT NULL, page_breaks TEXT NOT NULL, embedding BLOB,
        FOREIGN KEY(document_id) REFERENCES documents (id) ON DELETE CASCADE)""",
    "CREATE INDEX IF NOT EXISTS ix_chunks_document_id ON chunks (document_id)",
    # Answers cached by docqa.answering.cache; emptied per collection whenever its documents change.
    "CREATE TABLE IF NOT EXISTS answer_cache (collection_id INTEGER NOT NULL REFERENCES collections(id) "
    "ON DELETE CASCADE, key TEXT NOT NULL, answer TEXT NOT NULL, created_at TEXT, PRIMARY KEY (collection_id, key))",
    # A collection's generation, one more at each change of its documents: an answer is cached only if its
    # collection's generation is still the one its retrieval saw (an ask racing a delete caches nothing).
    "CREATE TABLE IF NOT EXISTS collection_generations (collection_id INTEGER PRIMARY KEY REFERENCES "
    "collections(id) ON DELETE CASCADE, generation INTEGER NOT NULL)",
]
_ADDED_COLUMNS = ("recipe", "ocr_pages")  # documents' columns that stores older than them lack


def upgrade() -> None:
    conn = op.get_bind()
    for statement in _TABLES:
        conn.execute(text(statement))
    columns = {row[1] for row in conn.execute(text("PRAGMA table_info(documents)"))}
    for column in _ADDED_COLUMNS:
        if column not in columns:
            conn.execute(text(f"ALTER TABLE documents ADD COLUMN {column} TEXT"))
    Fts5Tables().create_or_migrate(conn, Stemmer())


def downgrade() -> None:
    raise NotImplementedError("docqa's SQLite baseline cannot be undone")
