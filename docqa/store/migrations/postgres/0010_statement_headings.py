"""A financial statement's title is its passage's heading when its line goes on with the company's name or
the dates ("Consolidated Statements of Cash Flows GENERAL MILLS, INC. AND SUBSIDIARIES"), and not when a
contents line or a sentence names it (docqa.store.keyword.passage_stems): every passage's headings are written
again; bodies and term statistics stay as they are.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from alembic import op

from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.postgres.keyword_tables import PostgresKeywordTables

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    stemmer = Stemmer()
    PostgresKeywordTables(stemmer).rewrite_headings(op.get_bind(), stemmer)


def downgrade() -> None:
    """Nothing to undo: the older rule reads the same passages, and misses those statements' titles."""
