"""Conversations kept on the server (docqa.store.conversations): per collection and per owner (a hash of
the API key that made them; "" without keys), each message with its answer and what came with it.

Revision ID: s0003
Revises: s0002
"""

from __future__ import annotations

from alembic import op

revision = "s0003"
down_revision = "s0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """CREATE TABLE IF NOT EXISTS conversations (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        owner VARCHAR(64) NOT NULL, title TEXT NOT NULL, created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL)"""
    )
    op.execute("CREATE INDEX IF NOT EXISTS ix_conversations_owner ON conversations (collection_id, owner)")
    op.execute(
        """CREATE TABLE IF NOT EXISTS conversation_messages (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        question TEXT NOT NULL, answer TEXT NOT NULL, reasoning TEXT NOT NULL, record TEXT NOT NULL,
        feedback INTEGER, feedback_note TEXT, created_at DATETIME NOT NULL)"""
    )
    op.execute("CREATE INDEX IF NOT EXISTS ix_messages_conversation ON conversation_messages (conversation_id)")


def downgrade() -> None:
    op.execute("DROP TABLE conversation_messages")
    op.execute("DROP TABLE conversations")
