"""A filing's item heading keeps its number ("Item 2 Properties"), so Item 2's Properties is told from a note's
"Property and Equipment" (keyword index version 9, docqa.store.keyword.passage_stems): every passage's headings
are written again; bodies and term statistics stay as they are.

Revision ID: s0006
Revises: s0005
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

from docqa.store.keyword.fts5_tables import SCHEMA_VERSION, Fts5Tables
from docqa.store.keyword.passage_stems import Stemmer

revision = "s0006"
down_revision = "s0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    Fts5Tables().rewrite_headings(conn, Stemmer())
    conn.execute(text(f"PRAGMA user_version = {SCHEMA_VERSION}"))


def downgrade() -> None:
    """Nothing to undo: the older rule reads the same passages, and drops the item's number."""
