"""A statement's title used as a modifier in a heading ("Off-Balance Sheet Arrangements", "Balance Sheet
Location", "Income Statement Classification") is indexed as one word, so a question about a statement's
lines no longer finds those headings for the statement (keyword index version 11,
docqa.store.keyword.passage_stems.indexed_heading): every passage's headings are written again; bodies and
term statistics stay as they are.

Revision ID: s0008
Revises: s0007
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

from docqa.store.keyword.fts5_tables import SCHEMA_VERSION, Fts5Tables
from docqa.store.keyword.passage_stems import Stemmer

revision = "s0008"
down_revision = "s0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    Fts5Tables().rewrite_headings(conn, Stemmer())
    conn.execute(text(f"PRAGMA user_version = {SCHEMA_VERSION}"))


def downgrade() -> None:
    """Nothing to undo: the older rule reads the same passages, and takes those headings for statements."""
