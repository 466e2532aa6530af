"""Named API keys (docqa.store.api_keys): each kept as its SHA-256 with its role, granted collections and
limit on generations at once.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """CREATE TABLE IF NOT EXISTS api_keys (
        id SERIAL PRIMARY KEY,
        name VARCHAR(64) NOT NULL UNIQUE, key_hash VARCHAR(64) NOT NULL UNIQUE, role VARCHAR(16) NOT NULL,
        collections TEXT NOT NULL, max_generations INTEGER,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL, revoked_at TIMESTAMP WITH TIME ZONE)"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE api_keys")
