"""A statement's title used as a modifier in a heading ("Off-Balance Sheet Arrangements", "Balance Sheet
Location", "Income Statement Classification") is indexed as one word, so a question about a statement's
lines no longer finds those headings for the statement (docqa.store.keyword.passage_stems.indexed_heading):
every passage's headings are written again; bodies and term statistics stay as they are.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from alembic import op

from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.postgres.keyword_tables import PostgresKeywordTables

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    stemmer = Stemmer()
    PostgresKeywordTables(stemmer).rewrite_headings(op.get_bind(), stemmer)


def downgrade() -> None:
    """Nothing to undo: the older rule reads the same passages, and takes those headings for statements."""
