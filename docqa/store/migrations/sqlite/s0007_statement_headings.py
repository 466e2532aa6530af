"""A financial statement's title is its passage's heading when its line goes on with the company's name or
the dates ("Consolidated Statements of Cash Flows GENERAL MILLS, INC. AND SUBSIDIARIES"), and not when a
contents line or a sentence names it (keyword index version 10, docqa.store.keyword.passage_stems): every
passage's headings are written again; bodies and term statistics stay as they are.

Revision ID: s0007
Revises: s0006
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

from docqa.store.keyword.fts5_tables import SCHEMA_VERSION, Fts5Tables
from docqa.store.keyword.passage_stems import Stemmer

revision = "s0007"
down_revision = "s0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    Fts5Tables().rewrite_headings(conn, Stemmer())
    conn.execute(text(f"PRAGMA user_version = {SCHEMA_VERSION}"))


def downgrade() -> None:
    """Nothing to undo: the older rule reads the same passages, and misses those statements' titles."""
