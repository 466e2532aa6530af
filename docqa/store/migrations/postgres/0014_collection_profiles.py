"""Each collection may choose its document profiles (collections.profiles: names by comma, as
DOCQA_RETRIEVAL_PROFILES takes them); NULL: the deployment's.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE collections ADD COLUMN IF NOT EXISTS profiles VARCHAR(200)")


def downgrade() -> None:
    op.execute("ALTER TABLE collections DROP COLUMN profiles")
