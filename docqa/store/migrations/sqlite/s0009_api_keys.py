"""Named API keys (docqa.store.api_keys): each kept as its SHA-256 with its role, granted collections and
limit on generations at once.

Revision ID: s0009
Revises: s0008
"""

from __future__ import annotations

from alembic import op

revision = "s0009"
down_revision = "s0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """CREATE TABLE IF NOT EXISTS api_keys (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        name VARCHAR(64) NOT NULL UNIQUE, key_hash VARCHAR(64) NOT NULL UNIQUE, role VARCHAR(16) NOT NULL,
        collections TEXT NOT NULL, max_generations INTEGER,
        created_at DATETIME NOT NULL, revoked_at DATETIME)"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE api_keys")
