"""A statement's title used as a modifier in a heading ("Off-Balance Sheet Arrangements", "Balance Sheet
Location", "Income Statement Classification") is indexed as one word, so a question about a statement's
lines no longer finds those headings for the statement (docqa.store.keyword.passage_stems.indexed_heading):
every passage's headings are written again; bodies and term statistics stay as they are.

This revision once read every such passage's headings again, here, with the rules of its day. Headings are
derived data: they carry the keyword rules' version with their document (documents.derived) and are rebuilt by
`docqa reindex` (which `docqa serve` and `docqa ingest` run when a document is stale), so the revision changes
no schema and does nothing; it stays in the chain for the data homes that recorded it.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Nothing: the headings are rebuilt by `docqa reindex` (docqa.store.derived)."""


def downgrade() -> None:
    """Nothing to undo."""
