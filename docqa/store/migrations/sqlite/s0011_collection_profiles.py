"""Each collection may choose its document profiles (collections.profiles: names by comma, as
DOCQA_RETRIEVAL_PROFILES takes them); NULL: the deployment's.

Revision ID: s0011
Revises: s0010
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

revision = "s0011"
down_revision = "s0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {row[1] for row in op.get_bind().execute(text("PRAGMA table_info(collections)"))}
    if "profiles" not in columns:  # a store from before Alembic is made by today's models, then stamped
        op.execute("ALTER TABLE collections ADD COLUMN profiles VARCHAR(200)")


def downgrade() -> None:
    op.execute("ALTER TABLE collections DROP COLUMN profiles")
