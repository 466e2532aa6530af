"""Each document's catalog entry (docqa.store.catalog), as JSON text, and a queued upload's own catalog
fields, kept with its job until a worker ingests it.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE documents ADD COLUMN IF NOT EXISTS catalog TEXT")
    op.execute("ALTER TABLE ingest_jobs ADD COLUMN IF NOT EXISTS metadata TEXT")


def downgrade() -> None:
    op.execute("ALTER TABLE documents DROP COLUMN catalog")
    op.execute("ALTER TABLE ingest_jobs DROP COLUMN metadata")
