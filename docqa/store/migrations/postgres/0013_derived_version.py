"""Each document records the version of the rules its derived data was read with (documents.derived: the
keyword index's heading rules and the document profiles'), so that `docqa reindex` rebuilds what is stale
(docqa.store.derived). NULL: read by a docqa from before the column, stale.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE documents ADD COLUMN IF NOT EXISTS derived VARCHAR(200)")


def downgrade() -> None:
    op.execute("ALTER TABLE documents DROP COLUMN derived")
