"""Each document's catalog entry (docqa.store.catalog), as JSON.

Documents stored before it have none until they are read again; `docqa ingest` reads them again when the
reader changes, and an upload's metadata sets its fields.

Revision ID: s0002
Revises: s0001
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

revision = "s0002"
down_revision = "s0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {row[1] for row in op.get_bind().execute(text("PRAGMA table_info(documents)"))}
    if "catalog" not in columns:
        op.execute("ALTER TABLE documents ADD COLUMN catalog TEXT")


def downgrade() -> None:
    op.execute("ALTER TABLE documents DROP COLUMN catalog")
