"""Queued uploads kept in an object store (DOCQA_INGEST_UPLOAD_STORE): the job's key there.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE ingest_jobs ADD COLUMN object_key TEXT")


def downgrade() -> None:
    op.execute("ALTER TABLE ingest_jobs DROP COLUMN object_key")
