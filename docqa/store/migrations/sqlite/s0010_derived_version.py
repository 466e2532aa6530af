"""Each document records the version of the rules its derived data was read with (documents.derived: the
keyword index's heading rules and the document profiles'), so that `docqa reindex` rebuilds what is stale
(docqa.store.derived). NULL: read by a docqa from before the column, stale.

Revision ID: s0010
Revises: s0009
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

revision = "s0010"
down_revision = "s0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {row[1] for row in op.get_bind().execute(text("PRAGMA table_info(documents)"))}
    if "derived" not in columns:  # a store from before Alembic is made by today's models, then stamped
        op.execute("ALTER TABLE documents ADD COLUMN derived VARCHAR(200)")


def downgrade() -> None:
    op.execute("ALTER TABLE documents DROP COLUMN derived")
