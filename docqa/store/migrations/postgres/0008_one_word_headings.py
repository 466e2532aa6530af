"""One capitalised word alone on its line above a paragraph ("Employees", "Competition") is read as a heading
(docqa.store.keyword.passage_stems): every passage's headings are written again; bodies and term statistics
stay as they are.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from alembic import op

from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.postgres.keyword_tables import PostgresKeywordTables

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    stemmer = Stemmer()
    PostgresKeywordTables(stemmer).rewrite_headings(op.get_bind(), stemmer)


def downgrade() -> None:
    """Nothing to undo: the older rule reads the same passages, and finds fewer headings."""
