"""Uploaded originals kept in the database (docqa.store.postgres.originals), one row per content, so that
every API process serves the file a queued upload was read from, not only the worker that read it.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """CREATE TABLE IF NOT EXISTS document_originals (
        sha256 VARCHAR(64) PRIMARY KEY, data BYTEA NOT NULL, kept_at TIMESTAMP WITH TIME ZONE NOT NULL)"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE document_originals")
