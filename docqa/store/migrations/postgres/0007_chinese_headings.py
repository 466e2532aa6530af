"""Chinese headings read again: a heading the PDF's text runs into the sentence before it is found, and a
Chinese sentence or table row after a number is no longer taken for one (docqa.store.keyword.passage_stems).
Only documents holding Chinese text are indexed again.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from alembic import op

from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.postgres.keyword_tables import PostgresKeywordTables

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    stemmer = Stemmer()
    PostgresKeywordTables(stemmer).reindex_chinese(op.get_bind(), stemmer)


def downgrade() -> None:
    """Nothing to undo: the older rule reads the same passages."""
