"""A filing's item heading keeps its number ("Item 2 Properties"), so Item 2's Properties is told from a note's
"Property and Equipment" (docqa.store.keyword.passage_stems): every passage's headings are written again;
bodies and term statistics stay as they are.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from alembic import op

from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.postgres.keyword_tables import PostgresKeywordTables

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    stemmer = Stemmer()
    PostgresKeywordTables(stemmer).rewrite_headings(op.get_bind(), stemmer)


def downgrade() -> None:
    """Nothing to undo: the older rule reads the same passages, and drops the item's number."""
