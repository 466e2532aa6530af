"""Chinese headings read again: a heading the PDF's text runs into the sentence before it is found, and a
Chinese sentence or table row after a number is no longer taken for one (keyword index version 7,
docqa.store.keyword.passage_stems). Only documents holding Chinese text are indexed again.

Revision ID: s0004
Revises: s0003
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

from docqa.store.keyword.fts5_tables import SCHEMA_VERSION, Fts5Tables
from docqa.store.keyword.passage_stems import Stemmer

revision = "s0004"
down_revision = "s0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    Fts5Tables().reindex_chinese(conn, Stemmer())
    conn.execute(text(f"PRAGMA user_version = {SCHEMA_VERSION}"))


def downgrade() -> None:
    """Nothing to undo: the older rule reads the same passages."""
